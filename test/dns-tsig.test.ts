// THREAT_MIRROR_DNS_TSIG_KEY: the DNS primary answers only queries signed with the key and signs
// what it answers (RFC 8945, HMAC-SHA256), judged by dig (which checks every message's signature)
// and by BIND and PowerDNS Recursor as secondaries holding the key. Unbound cannot use TSIG
// (NLnetLabs/unbound#336). One daemon for the file, stopped in afterAll.
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decode, encode } from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats, type Standin, startStandin, type StandinThreat } from '../src/standin/index.js';
import { fileURLToPath } from 'node:url';
import { CliProcess, runCli, startCli } from './support/cli.js';
import { skipWithout } from './support/judges.js';
import { checkAnswerByHand, queryMacOf, signQueryByHand } from './support/tsig-hand.js';
import { dig, freePort, type Secondary, startBind, stopAll, startPdnsSecondary, type TsigKeyConfig, ZONE } from './support/secondaries.js';
import { until } from './support/until.js';
import { mirrorEnvFor } from './support/service.js';
import { apartFromSerial, recordsOf, zoneFileRecords } from './support/zone-records.js';

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
    env = mirrorEnvFor(API_KEY, NOW)(standin, join(dir, 'mirror.db'), {
      THREAT_MIRROR_INITIAL_DAYS: '3',
      THREAT_MIRROR_SCHEDULE: '*/2 * * * * *',
      THREAT_MIRROR_DNS_PORT: String(dnsPort),
      THREAT_MIRROR_DNS_ALLOW: '127.0.0.1/32',
      THREAT_MIRROR_DNS_NOTIFY: `127.0.0.1:${bindPort}`,
      THREAT_MIRROR_DNS_TSIG_KEY: `${TSIG.name}:${TSIG.secret}`,
      LOG_LEVEL: 'info',
    });
    daemon = new CliProcess([], env);
    await daemon.waitForLog((line) => line.msg === 'zone changed' && Number(line.hosts) > 0);
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
    expect(apartFromSerial(recordsOf(axfr.text).filter((record) => !record.includes(' tsig ')))).toEqual(apartFromSerial(zoneFileRecords(exported.stdout, ZONE)));
    const soa = signed(TSIG, ZONE, 'SOA');
    expect(soa.status).toBe('NOERROR');
    expect(soa.text).not.toMatch(UNVERIFIED);
  });

  it('is pulled by BIND and PowerDNS holding the key, and a change reaches BIND by a signed NOTIFY within 5 s', async () => {
    for (const secondary of secondaries) {
      await until(`${secondary.name} blocks ${BLOCKED}`, () => secondary.blocks(BLOCKED), 30_000, secondary.log);
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

/** Loaded into the daemon: its serving thread's clock runs 1,000 s ahead of the machine's (and dig's). */
const SERVING_FAULTS = fileURLToPath(new URL('./support/serving-thread-faults.cjs', import.meta.url));
const SKEW_S = 1_000;

/** Sends one datagram to the DNS port and resolves with the answer. */
async function askUdp(port: number, message: Buffer): Promise<Buffer> {
  const socket = createSocket('udp4');
  const answered = new Promise<Buffer>((resolve) => socket.once('message', resolve));
  socket.send(message, port, '127.0.0.1');
  try {
    return await answered;
  } finally {
    socket.close();
  }
}

describe("TSIG's time window: 300 s from the sidecar's clock, whatever fudge a query declares", () => {
  it('case 4: a query signed 1,000 s off the primary with a fudge of 3,600 gets BADTIME, signed and carrying the primary\'s time; dig -y, 1,000 s off, reads the same and verifies it', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'threat-mirror-tsig-time-'));
    const service = await startStandin({ threats: [{ id: 1, content: `https://${BLOCKED}/`, type: 'URL', blockedAt: `${TODAY}T08:00:00.000Z`, organization: 'acme' }], keys: { organizationKeys: { [API_KEY]: 'acme' }, userKeys: {} }, now: () => new Date(NOW) });
    const port = await freePort();
    const skewed = startCli([], mirrorEnvFor(API_KEY, NOW)(service, join(folder, 'mirror.db'), {
      THREAT_MIRROR_INITIAL_DAYS: '1',
      THREAT_MIRROR_SCHEDULE: '0 0 1 1 *',
      THREAT_MIRROR_DNS_PORT: String(port),
      THREAT_MIRROR_DNS_ALLOW: '127.0.0.1/32',
      THREAT_MIRROR_DNS_TSIG_KEY: `${TSIG.name}:${TSIG.secret}`,
      NODE_OPTIONS: `--require=${SERVING_FAULTS}`,
      SERVING_CLOCK_OFFSET_S: String(SKEW_S),
    }));
    try {
      await skewed.waitForLog((line) => line.msg === 'zone changed');
      const query = (): Buffer => encode({ id: 4711, type: 'query', flags: 0, questions: [{ type: 'SOA', name: ZONE, class: 'IN' }] });
      const machineNow = Math.floor(Date.now() / 1000);
      // Signed by the machine's clock, 1,000 s behind the primary's, asking for a window of 3,600 s: held to 300.
      const wide = signQueryByHand(query(), TSIG, machineNow, 3_600);
      const answer = checkAnswerByHand(await askUdp(port, wide), TSIG, queryMacOf(wide));
      expect(answer).toMatchObject({ rcode: 9, error: 18, timeSigned: machineNow, fudge: 300, verified: true });
      expect(Math.abs((answer.otherTime ?? 0) - (machineNow + SKEW_S))).toBeLessThan(60);
      // Signed by the primary's clock: answered (once the serving thread has the index: "zone
      // changed" is logged as the main thread tells it, and the zone answers SERVFAIL until it has).
      const inTime = signQueryByHand(query(), TSIG, machineNow + SKEW_S, 300);
      await until('the zone answers', async () => checkAnswerByHand(await askUdp(port, inTime), TSIG, queryMacOf(inTime)).rcode !== 2, 10_000);
      expect(checkAnswerByHand(await askUdp(port, inTime), TSIG, queryMacOf(inTime))).toMatchObject({ rcode: 0, error: 0, verified: true });
      // dig signs with a fudge of 300 by the machine's clock: BADTIME, with the primary's time (6 bytes of
      // Other Data). dig checks the answer's MAC first: "clocks are unsynchronized" is what it says of a
      // BADTIME whose MAC verified (a wrong MAC reads "tsig verify failure", an unsigned one "expected a TSIG").
      const digged = dig(['-y', `hmac-sha256:${TSIG.name}:${TSIG.secret}`, '@127.0.0.1', '-p', String(port), ZONE, 'SOA']);
      expect(digged.status).toBe('NOTAUTH');
      expect(digged.text).toMatch(/TSIG\s+hmac-sha256\.\s+\d+\s+300\s+32\s+\S+\s+\d+\s+BADTIME\s+6\s/);
      expect(digged.text).toMatch(/Couldn't verify signature: clocks are unsynchronized/);
      expect(digged.text).not.toMatch(/tsig verify failure|expected a TSIG/);
      expect(skewed.running).toBe(true);
    } finally {
      await skewed.stop('SIGTERM');
      await service.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
