// A seeded fuzzer of the daemon's DNS port, over UDP and TCP, from an allowed address and from one
// outside THREAT_MIRROR_DNS_ALLOW (127.0.0.9): truncated headers, wrong counts, compression loops,
// oversized labels and names, odd opcodes, types and classes, garbage IXFR authorities, TSIG and
// EDNS records, random bytes; over TCP, pipelined streams cut at random places, with lying length
// prefixes. Every answer must decode as a DNS response to its query; after each round the daemon
// runs, /healthz answers, the zone's SOA answers, the next sync run succeeds, the guard answered no
// SERVFAIL and the serving thread never restarted. Once without a TSIG key, once with one (the
// signature's reader then sees every allowed message). FUZZ_ROUNDS=N runs more rounds.
import { createSocket } from 'node:dgram';
import { decode, encode } from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { generateThreats } from '../src/standin/index.js';
import { servingPort, startCli } from './support/cli.js';
import { connectFrom, ZONE } from './support/dns-clients.js';
import { expectWholeAfterRound, FUZZ_ROUNDS, FUZZ_SEED, Rng, Tally, withConcurrency } from './support/fuzz.js';
import { skipWithout } from './support/judges.js';
import { dig, freePort } from './support/secondaries.js';
import { type HandKey, signQueryByHand } from './support/tsig-hand.js';
import { EVERY_SECOND_DAEMON, mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath } from './support/temp.js';

const KEY = 'acme-dns-fuzz-key';
const NOW = '2026-03-15T12:00:00.000Z';
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: '2', ...EVERY_SECOND_DAEMON });
const UDP_CASES = 300;
const TCP_STREAMS = 40;
const SOURCES = ['127.0.0.1', '127.0.0.1', '127.0.0.9'];
const TSIG: HandKey = { name: 'tm-fuzz', secret: Buffer.from(new Rng(FUZZ_SEED).bytes(32)).toString('base64') };

function u16(value: number): Buffer {
  const bytes = Buffer.alloc(2);
  bytes.writeUInt16BE(value & 0xffff);
  return bytes;
}

/** A well-formed query for the zone (or a name near it) to start a mutation from. */
function baseQuery(rng: Rng): Buffer {
  const type = rng.pick(['SOA', 'NS', 'AXFR', 'IXFR', 'A', 'TXT', 'CNAME'] as const);
  const name = rng.pick([ZONE, `x.${ZONE}`, 'example.com', '', ZONE.toUpperCase()]);
  const authorities = type === 'IXFR' ? [{ type: 'SOA' as const, name: ZONE, class: 'IN' as const, ttl: 0, data: { mname: 'a.', rname: 'b.', serial: rng.int(0, 2 ** 32 - 1), refresh: 0, retry: 0, expire: 0, minimum: 0 } }] : [];
  return encode({ type: 'query', id: rng.int(0, 0xffff), flags: rng.chance(0.5) ? 0x0100 : 0, questions: [{ type, name, class: 'IN' }], authorities });
}

/** One hostile message; with a key, some signed with it (then altered, or not). */
function dnsCase(rng: Rng, key?: HandKey): { kind: string; message: Buffer } {
  if (key !== undefined && rng.chance(0.25)) return signedCase(rng, key);
  const kind = rng.pick(['truncated-header', 'wrong-counts', 'compression-loop', 'oversized-label', 'long-name', 'flags', 'class-type', 'trailing-record', 'truncated', 'random', 'valid']);
  const base = baseQuery(rng);
  const message = Buffer.from(base);
  switch (kind) {
    case 'truncated-header':
      return { kind, message: message.subarray(0, rng.int(0, 11)) };
    case 'wrong-counts':
      for (const at of [4, 6, 8, 10]) if (rng.chance(0.5)) message.writeUInt16BE(rng.pick([0, 1, 2, 255, 0xffff, rng.int(0, 0xffff)]), at);
      return { kind, message };
    case 'compression-loop': {
      // The question's name: a pointer to itself, two pointing at each other, or one past the end.
      const loop = rng.pick([Buffer.from([0xc0, 12]), Buffer.from([0xc0, 14, 0xc0, 12]), Buffer.from([1, 0x61, 0xc0, 12]), Buffer.from([0xc0, 0xff]), Buffer.from([0xff, 0xff])]);
      return { kind, message: Buffer.concat([message.subarray(0, 12), loop, u16(rng.pick([6, 252, 251, 2])), u16(1)]) };
    }
    case 'oversized-label': {
      const length = rng.pick([64, 100, 127, 128, 191, 63]);
      const label = Buffer.concat([Buffer.from([length]), rng.bytes(rng.chance(0.5) ? length : rng.int(0, 10))]);
      return { kind, message: Buffer.concat([message.subarray(0, 12), label, Buffer.from([0]), u16(6), u16(1)]) };
    }
    case 'long-name': {
      const labels = Array.from({ length: rng.int(5, 140) }, () => Buffer.concat([Buffer.from([63]), Buffer.alloc(63, 0x61)]));
      return { kind, message: Buffer.concat([message.subarray(0, 12), ...labels, Buffer.from([0]), u16(6), u16(1)]) };
    }
    case 'flags':
      // Any opcode (NOTIFY, UPDATE, reserved), QR, TC, Z and rcode bits.
      message.writeUInt16BE(rng.int(0, 0xffff), 2);
      return { kind, message };
    case 'class-type': {
      const end = message.length - (base.readUInt16BE(8) > 0 ? message.length - 12 - questionLength(base) : 0);
      message.writeUInt16BE(rng.int(0, 0xffff), end - 4);
      message.writeUInt16BE(rng.pick([1, 3, 4, 254, 255, rng.int(0, 0xffff)]), end - 2);
      return { kind, message };
    }
    case 'trailing-record': {
      // A record in the additional section: TSIG-like (250) or OPT (41), with data whose lengths lie.
      const type = rng.pick([250, 41, 6, rng.int(0, 0xffff)]);
      const data = rng.bytes(rng.int(0, 80));
      const declared = rng.pick([data.length, data.length + rng.int(1, 300), Math.max(0, data.length - 3), 0xffff]);
      const owner = rng.pick([Buffer.from([0]), Buffer.from('07746d2d66757a7a00', 'hex'), Buffer.from([0xc0, 12]), Buffer.from([0xc0, 0xc0])]);
      const record = Buffer.concat([owner, u16(type), u16(rng.pick([255, 1, 4096])), Buffer.alloc(4), u16(declared), data]);
      const withRecord = Buffer.concat([message, record]);
      withRecord.writeUInt16BE(message.readUInt16BE(10) + 1, 10);
      return { kind, message: withRecord };
    }
    case 'truncated':
      return { kind, message: message.subarray(0, rng.int(12, message.length)) };
    case 'random':
      return { kind, message: rng.bytes(rng.int(12, 300)) };
    default:
      return { kind, message };
  }
}

/** A query signed with the key, at a time near ours or far from it, then maybe altered anywhere. */
function signedCase(rng: Rng, key: HandKey): { kind: string; message: Buffer } {
  const now = Math.floor(Date.now() / 1000);
  const signed = Buffer.from(signQueryByHand(baseQuery(rng), key, now + rng.pick([0, 0, 200, -200, 1_000, -100_000]), rng.pick([300, 0, 3_600, 65_535])));
  if (rng.chance(0.5)) return { kind: 'signed', message: signed };
  const flips = rng.int(1, 4);
  for (let flip = 0; flip < flips; flip += 1) signed[rng.int(0, signed.length - 1)] = rng.int(0, 255);
  return { kind: 'signed-altered', message: rng.chance(0.3) ? signed.subarray(0, rng.int(12, signed.length)) : signed };
}

/** The question section's length of a message dns-packet wrote (names uncompressed). */
function questionLength(message: Buffer): number {
  let at = 12;
  while (message[at] !== 0) at += (message[at] ?? 0) + 1;
  return at + 1 + 4 - 12;
}

/** What an answer says, or why it is wrong: it must decode as a response to the query's id. */
function judge(query: Buffer, answer: Buffer): string {
  let packet: ReturnType<typeof decode>;
  try {
    packet = decode(answer);
  } catch {
    return 'undecodable';
  }
  if (!packet.flag_qr) return 'not-a-response';
  if (query.length >= 2 && packet.id !== query.readUInt16BE(0)) return 'wrong-id';
  return rcodeOf(packet);
}

const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED', 'YXDOMAIN', 'YXRRSET', 'NXRRSET', 'NOTAUTH'];
function rcodeOf(packet: ReturnType<typeof decode>): string {
  const rcode = (packet.flags ?? 0) & 0xf;
  return RCODES[rcode] ?? `rcode ${rcode}`;
}

const WRONG = new Set(['undecodable', 'not-a-response', 'wrong-id']);

function askUdp(port: number, source: string, message: Buffer): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    const done = (answer?: Buffer): void => {
      clearTimeout(timer);
      socket.close();
      resolve(answer);
    };
    const timer = setTimeout(() => done(), 400);
    socket.once('message', (answer) => done(answer));
    socket.bind(0, source, () => socket.send(message, port, '127.0.0.1'));
  });
}

/** Several messages framed on one connection, written in pieces cut anywhere; some frames lie about their length. Resolves with the answers read. */
async function tcpStream(port: number, source: string, rng: Rng, key: HandKey | undefined): Promise<{ sent: Buffer[]; answers: Buffer[] }> {
  // Mostly queries that read well, so that the stream goes on past its first message (a message
  // that is no query closes the connection), with hostile ones among them.
  const sent = Array.from({ length: rng.int(1, 20) }, () => (rng.chance(0.6) ? (key !== undefined && rng.chance(0.5) ? signedCase(rng, key) : { message: baseQuery(rng) }) : dnsCase(rng, key)).message);
  const frames = sent.map((message) => {
    const length = rng.chance(0.1) ? rng.pick([0, 1, message.length + rng.int(1, 500), 0xffff]) : message.length;
    return Buffer.concat([u16(length), message]);
  });
  const socket = await connectFrom(source, port).catch(() => undefined);
  if (socket === undefined) return { sent, answers: [] };
  const answers: Buffer[] = [];
  let buffered = Buffer.alloc(0);
  socket.on('error', () => undefined);
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
      answers.push(buffered.subarray(2, 2 + buffered.readUInt16BE(0)));
      buffered = buffered.subarray(2 + buffered.readUInt16BE(0));
    }
  });
  for (const piece of rng.split(Buffer.concat(frames), 8)) {
    if (socket.destroyed) break;
    socket.write(piece);
    if (rng.chance(0.2)) await new Promise((resolve) => setTimeout(resolve, rng.int(1, 30)));
  }
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 800);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  socket.destroy();
  return { sent, answers };
}

async function fuzzDaemon(withKey: boolean): Promise<void> {
  const service = await serveThreats(KEY, NOW, generateThreats({ seed: 11, organizations: ['acme'], count: 300, fromDay: '2026-03-14', toDay: '2026-03-15', hostile: false }));
  const dnsPort = await freePort();
  const daemon = startCli(
    [],
    env(service, tempDbPath(), {
      THREAT_MIRROR_DNS_PORT: String(dnsPort),
      THREAT_MIRROR_DNS_ALLOW: '127.0.0.1/32',
      ...(withKey ? { THREAT_MIRROR_DNS_TSIG_KEY: `${TSIG.name}:${TSIG.secret}` } : {}),
    }),
  );
  const httpPort = await servingPort(daemon);
  await daemon.waitForLog((line) => line.msg === 'zone changed');
  for (let round = 0; round < FUZZ_ROUNDS; round += 1) {
    const rng = new Rng(FUZZ_SEED + round + (withKey ? 10_000 : 0));
    const tally = new Tally();
    const wrong: string[] = [];
    const key = withKey ? TSIG : undefined;
    const udpCases = Array.from({ length: UDP_CASES }, () => ({ ...dnsCase(rng, key), source: rng.pick(SOURCES) }));
    await withConcurrency(udpCases, 16, async ({ kind, message, source }) => {
      const answer = await askUdp(dnsPort, source, message);
      const outcome = answer === undefined ? 'dropped' : judge(message, answer);
      tally.add(`udp ${kind} ${outcome}`);
      if (WRONG.has(outcome)) wrong.push(`udp ${kind} ${message.toString('hex')} -> ${outcome}`);
    });
    const streams = Array.from({ length: TCP_STREAMS }, () => rng.pick(SOURCES));
    await withConcurrency(streams, 8, async (source) => {
      const { sent, answers } = await tcpStream(dnsPort, source, rng, key);
      tally.add(`tcp streams answered ${answers.length === 0 ? 'none' : answers.length < sent.length ? 'some' : 'all'}`);
      for (const answer of answers) {
        let packet: ReturnType<typeof decode> | undefined;
        try {
          packet = decode(answer);
        } catch {
          wrong.push(`tcp answer undecodable: ${answer.toString('hex').slice(0, 200)}`);
        }
        if (packet !== undefined) tally.add(`tcp ${rcodeOf(packet)}`);
      }
    });
    const guarded = await expectWholeAfterRound(daemon, httpPort);
    expect(dig(['@127.0.0.1', '-p', String(dnsPort), ...(withKey ? ['-y', `hmac-sha256:${TSIG.name}:${TSIG.secret}`] : []), ZONE, 'SOA']).status).toBe('NOERROR');
    console.log(`dns fuzz ${withKey ? 'with a TSIG key' : 'without a key'}, round ${round + 1}/${FUZZ_ROUNDS} (seed ${FUZZ_SEED + round}): ${tally.total} outcomes; ${tally}; guard: ${JSON.stringify(Object.fromEntries(guarded))}`);
    expect(wrong).toEqual([]);
  }
  daemon.kill('SIGTERM');
  expect((await daemon.exited).code).toBe(0);
}

describe.skipIf(skipWithout(['dig']))('the DNS port under a seeded fuzzer', () => {
  it(`answers every message it answers with a decodable response and no SERVFAIL, round after round, without a key (${FUZZ_ROUNDS} rounds, seed ${FUZZ_SEED})`, () => fuzzDaemon(false), 60_000 + FUZZ_ROUNDS * 30_000);

  it(`likewise with a TSIG key, every allowed message through the signature's reader (${FUZZ_ROUNDS} rounds)`, () => fuzzDaemon(true), 60_000 + FUZZ_ROUNDS * 30_000);
});
