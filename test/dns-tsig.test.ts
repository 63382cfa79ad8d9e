// THREAT_MIRROR_DNS_TSIG_KEY: the DNS primary answers only queries signed with the key and signs
// what it answers (RFC 8945, HMAC-SHA256), judged by dig (which checks every message's signature)
// and by BIND and PowerDNS Recursor as secondaries holding the key. Unbound cannot use TSIG
// (NLnetLabs/unbound#336). One daemon for the file, stopped in afterAll.
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decode, encode } from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats, type Standin, startStandin, type StandinThreat } from '../src/standin/index.js';
import { CliProcess, runCli } from './support/cli.js';
import { skipWithout } from './support/judges.js';
import { dig, freePort, type Secondary, startBind, stopAll, startPdnsSecondary, type TsigKeyConfig, until, ZONE } from './support/secondaries.js';
import { recordsOf, zoneFileRecords } from './support/zone-records.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const API_KEY = 'acme-dns-tsig-key';

const TSIG: TsigKeyConfig = { name: 'tm-xfr', secret: randomBytes(32).toString('base64') };
const OTHER_KEY: TsigKeyConfig = { name: 'tm-xfr', secret: randomBytes(32).toString('base64') };
const BLOCKED = 'tm-tsig-blocked.com';

let standin: Standin;
let daemon: CliProcess;
let dnsPort: number;
let env: Record<string, string>;
let dir: string;
const secondaries: Secondary[] = [];


const signed = (key: TsigKeyConfig, ...args: string[]): ReturnType<typeof dig> => dig(['-y', `hmac-sha256:${key.name}:${key.secret}`, '@127.0.0.1', '-p', String(dnsPort), ...args]);
/** dig prints these when a message's signature does not verify. */
const UNVERIFIED = /could not be validated|Couldn't verify|tsig verify failure|expected a TSIG/i;

describe.skipIf(skipWithout(['named', 'pdns_recursor', 'dig']))('the DNS primary with a TSIG key', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'threat-mirror-tsig-'));
    // Enough host-level blocks that a transfer takes several messages, each signed over the one before.
    const threats: StandinThreat[] = generateThreats({ seed: 53, organizations: ['acme'], count: 12_000, fromDay: addDays(TODAY, -2), toDay: TODAY, hostile: false });
    threats.push({ id: 9_900_001, content: `https://${BLOCKED}/`, type: 'URL', blockedAt: `${TODAY}T08:00:00.000Z`, organization: 'acme' });
    standin = await startStandin({ threats, keys: { organizationKeys: { [API_KEY]: 'acme' }, userKeys: {} }, now: () => new Date(NOW) });
    const [bindPort, pdnsPort] = [await freePort(), await freePort()];
    dnsPort = await freePort();
    env = {
      THREAT_MIRROR_API_URL: standin.url,
      THREAT_MIRROR_DB: join(dir, 'mirror.db'),
      THREAT_MIRROR_ORG: 'acme',
      THREAT_MIRROR_API_KEY: API_KEY,
      THREAT_MIRROR_NOW: NOW,
      THREAT_MIRROR_INITIAL_DAYS: '3',
      THREAT_MIRROR_SCHEDULE: '*/2 * * * * *',
      THREAT_MIRROR_DNS_PORT: String(dnsPort),
      THREAT_MIRROR_DNS_ALLOW: '127.0.0.1/32',
      THREAT_MIRROR_DNS_NOTIFY: `127.0.0.1:${bindPort}`,
      THREAT_MIRROR_DNS_TSIG_KEY: `${TSIG.name}:${TSIG.secret}`,
      LOG_LEVEL: 'info',
    };
    daemon = new CliProcess([], env);
    await daemon.waitForLog((line) => line.msg === 'zone changed' && Number(line.serial) > 1);
    secondaries.push(await startBind(join(dir, 'bind'), dnsPort, bindPort, TSIG), await startPdnsSecondary(join(dir, 'pdns'), dnsPort, pdnsPort, 3, TSIG));
  }, 60_000);

  afterAll(() => stopAll({ secondaries, daemon, standin, dir }));

  it('refuses an unsigned query and answers one signed with another key NOTAUTH (BADSIG), giving nothing of the zone', () => {
    const unsigned = dig(['@127.0.0.1', '-p', String(dnsPort), ZONE, 'SOA']);
    expect(unsigned.status).toBe('REFUSED');
    expect(dig(['@127.0.0.1', '-p', String(dnsPort), ZONE, 'AXFR']).text).not.toMatch(/\sCNAME\s/i);
    const forged = signed(OTHER_KEY, ZONE, 'SOA');
    expect(forged.status).toBe('NOTAUTH');
    expect(forged.text).toMatch(/TSIG\s+hmac-sha256\.\s+\d+\s+300\s+0\s+\d+\s+BADSIG/);
    expect(forged.text).not.toMatch(/\sSOA\s+localhost\./);
    const unknownKey = signed({ name: 'tm-other', secret: TSIG.secret }, ZONE, 'SOA');
    expect(unknownKey.status).toBe('NOTAUTH');
    expect(unknownKey.text).toMatch(/BADKEY/);
  });

  it('answers a query whose TSIG record overruns itself FORMERR over UDP, and goes on serving', async () => {
    const query = encode({ id: 77, type: 'query', flags: 0, questions: [{ type: 'SOA', name: ZONE, class: 'IN' }] });
    // A TSIG record as a client would add it, then its MAC size set past the record's end.
    const algorithm = Buffer.from('0b686d61632d73686132353600', 'hex');
    const data = Buffer.concat([algorithm, Buffer.alloc(6), Buffer.from([0x01, 0x2c, 0xff, 0xff]), Buffer.alloc(32), Buffer.from([0, 77, 0, 0, 0, 0])]);
    const record = Buffer.concat([Buffer.from('06746d2d78667200', 'hex'), Buffer.from([0, 250, 0, 255, 0, 0, 0, 0, data.length >> 8, data.length & 0xff]), data]);
    const hostile = Buffer.concat([query, record]);
    hostile.writeUInt16BE(1, 10);
    const socket = createSocket('udp4');
    const answered = new Promise<Buffer>((resolve) => socket.once('message', resolve));
    socket.send(hostile, dnsPort, '127.0.0.1');
    const answer = decode(await answered);
    socket.close();
    expect((answer.flags ?? 0) & 0xf).toBe(1); // FORMERR
    expect(dig(['+tcp', '-y', `hmac-sha256:${TSIG.name}:${TSIG.secret}`, '@127.0.0.1', '-p', String(dnsPort), ZONE, 'SOA']).status).toBe('NOERROR');
    expect(daemon.running).toBe(true);
  });

  it('answers a signed AXFR with the records of export --format rpz, in several messages each signed and verified by dig', async () => {
    const axfr = signed(TSIG, ZONE, 'AXFR');
    expect(axfr.text).not.toMatch(UNVERIFIED);
    const messages = Number(/XFR size: \d+ records \(messages (\d+)/.exec(axfr.text)?.[1]);
    expect(messages).toBeGreaterThan(1);
    const tsigRecords = axfr.text.split('\n').filter((line) => /^tm-xfr\.\s+0\s+ANY\s+TSIG\s/.test(line));
    expect(tsigRecords).toHaveLength(messages);
    const exported = await runCli(['export', '--format', 'rpz'], env);
    expect(exported.code, exported.stderr).toBe(0);
    expect(recordsOf(axfr.text).filter((record) => !record.includes(' tsig '))).toEqual(zoneFileRecords(exported.stdout, ZONE));
    const soa = signed(TSIG, ZONE, 'SOA');
    expect(soa.status).toBe('NOERROR');
    expect(soa.text).not.toMatch(UNVERIFIED);
  });

  it('is pulled by BIND and PowerDNS holding the key, and a change reaches BIND by a signed NOTIFY within 5 s', async () => {
    for (const secondary of secondaries) {
      await until(`${secondary.name} blocks ${BLOCKED}`, () => secondary.blocks(BLOCKED), 30_000);
      expect(await secondary.blocks('tm-tsig-unrelated.org'), secondary.name).toBe(false);
    }
    const changesBefore = daemon.logs.filter((line) => line.msg === 'zone changed').length;
    standin.addThreats([{ id: 9_900_002, content: 'https://tm-tsig-added.com/', type: 'URL', blockedAt: `${TODAY}T11:00:00.000Z`, organization: 'acme' }]);
    await daemon.waitForLog(() => daemon.logs.filter((line) => line.msg === 'zone changed').length > changesBefore);
    const bind = secondaries[0] as Secondary;
    expect(await until('BIND blocks tm-tsig-added.com', () => bind.blocks('tm-tsig-added.com'), 5_000)).toBeLessThan(5_000);
  }, 90_000);

  it("never prints the key's secret, nor writes it to the database file or beside it", () => {
    const secretBytes = Buffer.from(TSIG.secret);
    expect(`${daemon.stdout}${daemon.stderr}`).not.toContain(TSIG.secret);
    for (const file of readdirSync(dir).filter((name) => name.startsWith('mirror.db') && statSync(join(dir, name)).isFile())) {
      expect(readFileSync(join(dir, file)).includes(secretBytes), file).toBe(false);
    }
  });
});
