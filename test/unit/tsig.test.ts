// TSIG (src/dns/tsig.ts) on its own: what the DNS primary's checks decide for a query signed
// well, late, with another key or altered. dig, BIND and PowerDNS judge the answers' signatures in
// test/dns-tsig.test.ts; here, the cases they cannot produce (a clock 20 minutes off).
import { randomBytes } from 'node:crypto';
import { encode } from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { ResponseSigner, signBadTime, signRequest, verifyRequest } from '../../src/dns/tsig.js';
import { checkAnswerByHand, queryMacOf, signQueryByHand } from '../support/tsig-hand.js';

const key = { name: 'tm-xfr', secret: randomBytes(32) };
const NOW = 1_795_700_000;
const query = (): Buffer => encode({ id: 4242, type: 'query', flags: 0, questions: [{ type: 'AXFR', name: 'rpz.threat-mirror', class: 'IN' }] });

describe('TSIG', () => {
  it('accepts a query signed with the key within 300 s, and hands on its MAC and id for the answer', () => {
    const signed = signRequest(query(), key, NOW);
    for (const skew of [0, 299, -299]) {
      const check = verifyRequest(signed, key, NOW + skew);
      expect(check.kind, String(skew)).toBe('signed');
      if (check.kind === 'signed') expect(check.id).toBe(4242);
    }
    expect(verifyRequest(query(), key, NOW)).toEqual({ kind: 'unsigned' });
  });

  it('refuses a query signed too long ago (BADTIME), with another key (BADKEY) or altered (BADSIG)', () => {
    const signed = signRequest(query(), key, NOW);
    expect(verifyRequest(signed, key, NOW + 301)).toMatchObject({ kind: 'late', timeSigned: NOW, id: 4242 });
    expect(verifyRequest(signed, key, NOW - 1_200)).toMatchObject({ kind: 'late', timeSigned: NOW });
    expect(verifyRequest(signed, { name: 'tm-other', secret: key.secret }, NOW)).toMatchObject({ kind: 'invalid', error: 'BADKEY' });
    expect(verifyRequest(signed, { name: key.name, secret: randomBytes(32) }, NOW)).toMatchObject({ kind: 'invalid', error: 'BADSIG' });
    // One bit of the question changed after signing (AXFR became IXFR's neighbour type 0xFC → 0xFD).
    const altered = Buffer.from(signed);
    const typeLow = 12 + 'rpz.threat-mirror'.length + 3;
    altered.writeUInt8(altered.readUInt8(typeLow) ^ 0x01, typeLow);
    expect(verifyRequest(altered, key, NOW)).toMatchObject({ kind: 'invalid', error: 'BADSIG' });
  });

  it('case 4: holds the time window to 300 s whatever fudge the query declares (it may narrow it, never widen it)', () => {
    const hand = { name: key.name, secret: key.secret.toString('base64') };
    // 1,000 s off with a fudge of 3,600: within what the client asks for, not within ours.
    expect(verifyRequest(signQueryByHand(query(), hand, NOW - 1_000, 3_600), key, NOW)).toMatchObject({ kind: 'late', timeSigned: NOW - 1_000 });
    expect(verifyRequest(signQueryByHand(query(), hand, NOW + 1_000, 65_535), key, NOW)).toMatchObject({ kind: 'late' });
    // 200 s off: within 300 s, whatever the fudge above it; a fudge of 100 narrows the window.
    expect(verifyRequest(signQueryByHand(query(), hand, NOW - 200, 3_600), key, NOW).kind).toBe('signed');
    expect(verifyRequest(signQueryByHand(query(), hand, NOW - 200, 100), key, NOW).kind).toBe('late');
  });

  it("answers BADTIME signed over the query, the query's own time as Time Signed and ours in Other Data (RFC 8945 5.2.3)", () => {
    const hand = { name: key.name, secret: key.secret.toString('base64') };
    const signed = signQueryByHand(query(), hand, NOW - 1_000, 3_600);
    const check = verifyRequest(signed, key, NOW);
    if (check.kind !== 'late') throw new Error(`expected late, got ${check.kind}`);
    const answer = signBadTime(encode({ id: 4242, type: 'response', flags: 9, questions: [{ type: 'AXFR', name: 'rpz.threat-mirror', class: 'IN' }] }), key, check, NOW);
    expect(checkAnswerByHand(answer, hand, queryMacOf(signed))).toEqual({ rcode: 9, error: 18, timeSigned: NOW - 1_000, fudge: 300, otherTime: NOW, verified: true });
  });

  it('treats a truncated or trailing-garbage message as unsigned, never throwing', () => {
    const signed = signRequest(query(), key, NOW);
    for (const broken of [signed.subarray(0, signed.length - 3), Buffer.concat([signed, Buffer.from([0, 1, 2])]), Buffer.alloc(5)]) {
      expect(() => verifyRequest(broken, key, NOW)).not.toThrow();
      expect(verifyRequest(broken, key, NOW).kind).toBe('unsigned');
    }
  });

  it('reads a TSIG record whose fields overrun it, or whose name has a retired label type, as malformed, never throwing', () => {
    const signed = signRequest(query(), key, NOW);
    // The record's data ends with the algorithm name (13 bytes), time and fudge (8), MAC size (2), MAC (32), id, error and other length (6).
    const macSizeAt = signed.length - (13 + 8 + 2 + 32 + 6) + 13 + 8;
    const overrun = Buffer.from(signed);
    overrun.writeUInt16BE(0xffff, macSizeAt);
    const retiredLabel = Buffer.from(signed);
    retiredLabel.writeUInt8(0x41, signed.length - (13 + 8 + 2 + 32 + 6));
    for (const malformed of [overrun, retiredLabel]) {
      expect(() => verifyRequest(malformed, key, NOW)).not.toThrow();
      expect(verifyRequest(malformed, key, NOW)).toEqual({ kind: 'malformed' });
    }
  });

  it('signs each message of an answer over the MAC before it: the same messages signed again give the same MACs, another first MAC changes them all', () => {
    const request = { mac: randomBytes(32), id: 4242 };
    const messages = [query(), query(), query()];
    const macs = (first: Buffer): string[] => {
      const signer = new ResponseSigner(key, { ...request, mac: first });
      return messages.map((message) => signer.sign(message, NOW).subarray(-38, -6).toString('hex'));
    };
    expect(macs(request.mac)).toEqual(macs(request.mac));
    const other = macs(randomBytes(32));
    macs(request.mac).forEach((mac, index) => expect(other[index]).not.toBe(mac));
    expect(new Set(macs(request.mac)).size).toBe(3);
  });
});
