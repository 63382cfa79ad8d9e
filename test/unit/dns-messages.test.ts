// DNS messages (src/dns/messages.ts) the primary answers with when a query cannot be answered as
// usual: a question that would not read back as sent, and a failure's answer from the header alone.
import { decode, encode } from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { decodeQuery, failureResponse, questionReadsBack } from '../../src/dns/messages.js';

const query = (name: string): Buffer => encode({ type: 'query', id: 99, flags: 0x0100, questions: [{ type: 'SOA', name, class: 'IN' }] });

describe('DNS messages', () => {
  it('tells a question that would be echoed altered (bytes that are no text, a dot inside a label, an unknown class) from one that reads back', () => {
    expect(questionReadsBack(decodeQuery(query('rpz.threat-mirror'))!, query('rpz.threat-mirror'))).toBe(true);
    expect(questionReadsBack(decodeQuery(query('RPZ.Threat-Mirror'))!, query('RPZ.Threat-Mirror'))).toBe(true);
    // A label of 63 bytes that are no UTF-8: read as U+FFFD each, written back as 3 bytes each, past 63 (found by the DNS fuzzer).
    const binary = Buffer.concat([query('x').subarray(0, 12), Buffer.from([63]), Buffer.alloc(63, 0xff), Buffer.from([0, 0, 6, 0, 1])]);
    expect(questionReadsBack(decodeQuery(binary)!, binary)).toBe(false);
    const dotted = Buffer.concat([query('x').subarray(0, 12), Buffer.from([3]), Buffer.from('a.b'), Buffer.from([0, 0, 6, 0, 1])]);
    expect(questionReadsBack(decodeQuery(dotted)!, dotted)).toBe(false);
    const oddClass = Buffer.from(query('rpz.threat-mirror'));
    oddClass.writeUInt16BE(4000, oddClass.length - 2);
    expect(questionReadsBack(decodeQuery(oddClass)!, oddClass)).toBe(false);
  });

  it('answers a failure from the header alone when the question cannot be echoed: the id, opcode and RD kept, no records', () => {
    const binary = Buffer.concat([query('x').subarray(0, 12), Buffer.from([63]), Buffer.alloc(63, 0xff), Buffer.from([0, 0, 6, 0, 1])]);
    const answer = decode(failureResponse(binary, undefined, 'FORMERR')!);
    expect(answer).toMatchObject({ id: 99, type: 'response', flag_rd: true, questions: [], answers: [] });
    expect((answer.flags ?? 0) & 0xf).toBe(1);
    expect(failureResponse(Buffer.alloc(5), undefined, 'SERVFAIL')).toBeUndefined();
    // With a question that encodes, it is echoed.
    expect(decode(failureResponse(query('rpz.threat-mirror'), decodeQuery(query('rpz.threat-mirror')), 'SERVFAIL')!).questions).toEqual([{ name: 'rpz.threat-mirror', type: 'SOA', class: 'IN' }]);
  });
});
