// A seeded fuzzer of the daemon's HTTP port, on raw sockets: bad request lines, bad escapes in
// every route and query, invalid chunked bodies, lying Content-Length, header floods within the
// limits, random bytes. Every answer must be a well-formed HTTP answer and no server error (a 503
// busy is fine); after each round the daemon runs, /healthz answers, the next sync run succeeds,
// the guard answered nothing but 400s and the serving thread never restarted. FUZZ_ROUNDS=N runs
// more rounds (FUZZ_SEED other bytes); each round prints what its cases got, and FUZZ_SHOW=OUTCOME
// (a status, no-answer, waiting) the cases that got it. A client that half-closes before its answer
// gets none (Node's server ends such a connection): no-answer is no defect.
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { generateThreats } from '../src/standin/index.js';
import { servingPort, startCli } from './support/cli.js';
import { expectWholeAfterRound, FUZZ_ROUNDS, FUZZ_SEED, Rng, Tally, withConcurrency } from './support/fuzz.js';
import { EVERY_SECOND_DAEMON, mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath } from './support/temp.js';

const KEY = 'acme-http-fuzz-key';
const NOW = '2026-03-15T12:00:00.000Z';
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: '2', ...EVERY_SECOND_DAEMON });
const CASES_PER_ROUND = 240;
/** How long a case waits for an answer before it gives up on the connection (a request the server still waits on). */
const ANSWER_WAIT_MS = 700;

const ROUTES = ['/v1/lookup', '/v1/exports/domains', '/v1/exports/rpz', '/v1/exports/csv', '/v1/exports/stix', '/v1/exports/', '/v1/other', '/healthz', '/readyz', '/startupz', '/metrics', '/', '*'];
const BAD_ESCAPES = ['%', '%%', '%zz', '%E0%A4%A', '%C0%80', '%ED%A0%80', '%FF', '%00', '%2', '%u0041', '%25%', '%F4%90%80%80', '%0D%0A', '..%2F'];
const QUERY_KEYS = ['value', 'org', 'fresh', '%', 'value%zz', '', 'values[]'];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT', 'PATCH', 'get', 'G\u0000T', 'X'.repeat(40), ''];
const VERSIONS = ['HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/9.9', 'HTTP/1.1 ', 'HTTP/1', 'http/1.1', 'HTTP/1.1\u0000', ''];

/** A path to one of the routes with bad escapes in the path or the query. */
function target(rng: Rng): string {
  let path = rng.pick(ROUTES);
  if (rng.chance(0.6)) path += rng.pick(BAD_ESCAPES);
  if (rng.chance(0.3)) path = path.replace('/v1/', `/v1/${rng.pick(BAD_ESCAPES)}`);
  if (rng.chance(0.6)) {
    const pairs = Array.from({ length: rng.int(1, 4) }, () => `${rng.pick(QUERY_KEYS)}=${rng.chance(0.5) ? rng.pick(BAD_ESCAPES) : 'https://evil.example/x'}${rng.chance(0.3) ? rng.pick(BAD_ESCAPES) : ''}`);
    path += `?${pairs.join(rng.chance(0.8) ? '&' : ';')}`;
  }
  if (rng.chance(0.05)) path = `http://[${rng.pick(BAD_ESCAPES)}${path}`;
  return path;
}

function headers(rng: Rng, extra: string[] = []): string {
  const lines = ['Host: fuzz', ...extra];
  if (rng.chance(0.2)) lines.push(`Authorization: Bearer ${rng.pick(BAD_ESCAPES)}`);
  if (rng.chance(0.2)) lines.push(`If-None-Match: ${rng.pick(['*', '"x"', 'W/"', ',,,', rng.pick(BAD_ESCAPES)])}`);
  if (rng.chance(0.2)) lines.push(`If-Modified-Since: ${rng.pick(['yesterday', '', 'Thu, 01 Jan 1970 00:00:00 GMT', '9'.repeat(30)])}`);
  return `${lines.join('\r\n')}\r\n`;
}

/** One case: the bytes to send, in the pieces to write them in. */
function httpCase(rng: Rng): { kind: string; bytes: Buffer } {
  const kind = rng.pick(['request-line', 'escapes', 'chunked', 'content-length', 'header-flood', 'random']);
  const text = (value: string): Buffer => Buffer.from(value, 'latin1');
  switch (kind) {
    case 'request-line': {
      const line = [rng.pick(METHODS), target(rng), rng.pick(VERSIONS)].filter(() => rng.chance(0.9)).join(rng.pick([' ', '  ', '\t', ' ']));
      return { kind, bytes: text(`${line}\r\n${headers(rng)}\r\n`) };
    }
    case 'escapes':
      return { kind, bytes: text(`${rng.pick(['GET', 'HEAD', 'POST'])} ${target(rng)} HTTP/1.1\r\n${headers(rng, ['Content-Length: 0'])}\r\n`) };
    case 'chunked': {
      const chunks = Array.from({ length: rng.int(1, 4) }, () => rng.pick(['5\r\n{"val\r\n', 'zz\r\nxx\r\n', '-1\r\n\r\n', 'FFFFFFFFFFFF\r\nabc\r\n', '3;ext=1\r\nabc\r\n', '2\r\nabcdef\r\n', '0\r\nTrailer: x\r\n\r\n', '\r\n', '10\r\n{"values":["%"]}']));
      return { kind, bytes: text(`POST ${rng.chance(0.7) ? '/v1/lookup' : target(rng)} HTTP/1.1\r\n${headers(rng, ['Transfer-Encoding: chunked', ...(rng.chance(0.2) ? ['Content-Length: 5'] : [])])}\r\n${chunks.join('')}`) };
    }
    case 'content-length': {
      const body = rng.pick(['{"values":["https://evil.example/x"]}', '{"values":', '{"values":["%E0%A4%A"]}', '', 'x'.repeat(100), '{"values":[1,2,{}]}']);
      const declared = rng.pick([body.length + rng.int(1, 1000), Math.max(0, body.length - rng.int(1, 10)), -1, 2 ** 53, 'abc', '1, 2', `${body.length}\r\nContent-Length: ${body.length + 3}`]);
      return { kind, bytes: text(`POST /v1/lookup HTTP/1.1\r\n${headers(rng, [`Content-Length: ${declared}`])}\r\n${body}`) };
    }
    case 'header-flood': {
      // Within Node's limits (16 KB of headers): many headers, repeated ones, long values.
      const flood = Array.from({ length: rng.int(20, 90) }, (_, index) => `${rng.pick(['X-F', 'Accept', 'Cookie', 'Authorization', 'Content-Type', 'Host'])}${rng.chance(0.5) ? index : ''}: ${'v'.repeat(rng.int(0, 150))}`);
      return { kind, bytes: text(`GET ${rng.pick(['/v1/lookup?value=a.example', '/v1/exports/domains', '/healthz'])} HTTP/1.1\r\n${headers(rng, flood)}\r\n`) };
    }
    default:
      return { kind, bytes: rng.bytes(rng.int(1, 600)) };
  }
}

interface Answered {
  /** The status line's code, or what happened instead: 'no-answer' (closed with nothing), 'waiting' (the server still waits for the rest). */
  readonly outcome: string;
  readonly head: string;
}

/** Sends one case in pieces and reads the start of what comes back. */
function send(port: number, bytes: Buffer, rng: Rng): Promise<Answered> {
  const pieces = rng.split(bytes, 4);
  const halfClose = rng.chance(0.3);
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    const done = (outcome?: string): void => {
      clearTimeout(timer);
      socket.destroy();
      const head = received.toString('latin1', 0, 200);
      const status = /^HTTP\/1\.[01] (\d{3}) /.exec(head)?.[1];
      resolve({ outcome: outcome ?? (status ?? (received.length === 0 ? 'no-answer' : 'garbled')), head });
    };
    const timer = setTimeout(() => done(received.length === 0 ? 'waiting' : undefined), ANSWER_WAIT_MS);
    socket.on('error', () => done());
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.includes('\r\n\r\n')) done();
    });
    socket.on('close', () => done());
    socket.on('connect', () => {
      for (const piece of pieces) socket.write(piece);
      if (halfClose) socket.end();
    });
  });
}

describe('the HTTP port under a seeded fuzzer', () => {
  it(`answers every case with a well-formed answer and no server error, round after round (${FUZZ_ROUNDS} rounds of ${CASES_PER_ROUND} cases, seed ${FUZZ_SEED})`, async () => {
    const service = await serveThreats(KEY, NOW, generateThreats({ seed: 7, organizations: ['acme'], count: 300, fromDay: '2026-03-14', toDay: '2026-03-15' }));
    const daemon = startCli([], env(service, tempDbPath()));
    const port = await servingPort(daemon);
    await daemon.waitForLog((line) => line.msg === 'sync of organization "acme" succeeded');
    for (let round = 0; round < FUZZ_ROUNDS; round += 1) {
      const rng = new Rng(FUZZ_SEED + round);
      const cases = Array.from({ length: CASES_PER_ROUND }, () => httpCase(rng));
      const tally = new Tally();
      const wrong: string[] = [];
      await withConcurrency(cases, 8, async ({ kind, bytes }) => {
        const answer = await send(port, bytes, rng);
        tally.add(`${kind} ${answer.outcome}`);
        if (process.env.FUZZ_SHOW === answer.outcome) console.log(`case ${kind} -> ${answer.outcome}: ${JSON.stringify(bytes.toString('latin1').slice(0, 300))}`);
        // A server error, or bytes that are no HTTP answer, is a defect found.
        if (answer.outcome === 'garbled' || (/^5\d\d$/.test(answer.outcome) && answer.outcome !== '503')) wrong.push(`${kind}: ${JSON.stringify(bytes.toString('latin1').slice(0, 300))} -> ${JSON.stringify(answer.head)}`);
      });
      const guarded = await expectWholeAfterRound(daemon, port);
      console.log(`http fuzz round ${round + 1}/${FUZZ_ROUNDS} (seed ${FUZZ_SEED + round}): ${tally.total} cases; ${tally}; guard: ${JSON.stringify(Object.fromEntries(guarded))}`);
      expect(wrong).toEqual([]);
    }
    daemon.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  }, 60_000 + FUZZ_ROUNDS * 30_000);
});
