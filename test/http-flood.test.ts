// Whoever reaches the HTTP port cannot take the daemon down: /v1/lookup requests and their bytes in
// flight on the HTTP thread are capped (503 with Retry-After beyond it), so a flood of the largest
// requests the endpoint accepts leaves the thread's heap, the probes and the sync alone.
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { generateThreats } from '../src/standin/index.js';
import { MAX_CONNECTIONS_PER_ADDRESS } from '../src/serve/http-limits.js';
import { type CliProcess, servingPort, startCli } from './support/cli.js';
import { probeHealthz } from './support/probes.js';
import { EVERY_SECOND_DAEMON, mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath } from './support/temp.js';

const KEY = 'acme-flood-key';
const NOW = '2026-03-15T12:00:00.000Z';
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: '3', ...EVERY_SECOND_DAEMON });

/** The largest request the endpoint takes: 1,000 URLs of 4,096 characters (4.0 MiB of JSON). */
function largestLookupBody(): Buffer {
  const values = Array.from({ length: 1000 }, (_, index) => {
    const head = `https://flood-${index}.example/`;
    return head + 'p'.repeat(4096 - head.length);
  });
  return Buffer.from(JSON.stringify({ values }));
}

interface Answer {
  readonly status: number;
  readonly retryAfter: string | undefined;
  readonly body: string;
}

function post(port: number, body: Buffer): Promise<Answer | Error> {
  return new Promise((resolve) => {
    const sent = request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/lookup', headers: { 'content-type': 'application/json', 'content-length': body.length } }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'], body: text }));
      response.on('error', resolve);
    });
    sent.on('error', resolve);
    sent.end(body);
  });
}

async function healthzWithin(port: number): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const response = await fetch(`http://127.0.0.1:${port}/healthz`);
  await response.text();
  return { status: response.status, ms: performance.now() - started };
}

const succeededRuns = (daemon: CliProcess): number => daemon.logs.filter((line) => line.msg === 'sync of organization "acme" succeeded').length;

describe('the HTTP endpoints under a flood', () => {
  it('40 concurrent lookups of 4 MiB each: the daemon stays up, sheds load with 503 + Retry-After, /healthz answers within 4 s all through it, the next sync runs', async () => {
    const service = await serveThreats(KEY, NOW, generateThreats({ seed: 3, organizations: ['acme'], count: 200, fromDay: '2026-03-13', toDay: '2026-03-15' }));
    const dbPath = tempDbPath();
    const daemon = startCli([], env(service, dbPath));
    const port = await servingPort(daemon);
    await daemon.waitForLog((line) => line.msg === 'sync of organization "acme" succeeded');

    const body = largestLookupBody();
    expect(body.length).toBeGreaterThan(4_000_000);
    expect(body.length).toBeLessThanOrEqual(4 * 1024 * 1024);
    // An orchestrator's probes go on during the flood: the first is sent with the lookups.
    const probes = probeHealthz(port);
    const answers = await Promise.all(Array.from({ length: 40 }, () => post(port, body)));
    await probes.stop();
    const health = await healthzWithin(port);

    expect(daemon.running, `the daemon exited; stdout:\n${daemon.stdout.slice(-3000)}`).toBe(true);
    expect(probes.timings.length, 'probes answered while the lookups were in flight').toBeGreaterThanOrEqual(2);
    // Within the shipped pod's liveness timeout (5 s), with room: 0.3-0.7 s seen beside other suites, 2.1 s
    // once at a load of 9 on 2 cores. The defects it guards against: a dead daemon, probes held for the flood.
    expect(Math.max(...probes.timings), probes.timings.map(Math.round).join(', ')).toBeLessThan(4_000);
    expect(health.status).toBe(200);
    expect(health.ms).toBeLessThan(2_000);
    const failures = answers.filter((answer): answer is Error => answer instanceof Error);
    expect(failures.map((error) => error.message)).toEqual([]);
    const statuses = (answers as Answer[]).map((answer) => answer.status);
    expect(statuses.every((status) => status === 200 || status === 503), statuses.join(',')).toBe(true);
    expect(statuses).toContain(200);
    expect(statuses).toContain(503);
    for (const answer of answers as Answer[]) {
      if (answer.status === 200) expect((JSON.parse(answer.body) as { results: unknown[] }).results).toHaveLength(1000);
      if (answer.status !== 503) continue;
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
      expect((JSON.parse(answer.body) as { error: string }).error).toMatch(/busy/);
    }

    const before = succeededRuns(daemon);
    await daemon.waitForLog(() => succeededRuns(daemon) > before);
    daemon.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  });

  it('one address holds at most 128 of the 256 connections: beyond that its connections are closed at once, and another address still gets answers', async () => {
    const service = await serveThreats(KEY, NOW, []);
    const daemon = startCli([], env(service, tempDbPath()));
    const port = await servingPort(daemon);
    const held: Socket[] = [];
    const outcomes = await Promise.all(
      Array.from({ length: MAX_CONNECTIONS_PER_ADDRESS + 20 }, () =>
        new Promise<'open' | 'closed'>((resolve) => {
          const socket = connect({ host: '127.0.0.1', port, localAddress: '127.0.0.9' });
          held.push(socket);
          socket.resume(); // flowing, so that the server's close is seen
          socket.on('error', () => undefined);
          // Open for 1 s after connecting: the server kept it; closed before: the server refused it a place.
          socket.once('connect', () => setTimeout(() => resolve(socket.destroyed ? 'closed' : 'open'), 1_000));
          socket.once('close', () => resolve('closed'));
        }),
      ),
    );
    try {
      expect(outcomes.filter((outcome) => outcome === 'open')).toHaveLength(MAX_CONNECTIONS_PER_ADDRESS);
      expect((await healthzWithin(port)).status).toBe(200);
    } finally {
      for (const socket of held) socket.destroy();
    }
    daemon.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  });

  it('a client that drips its headers (slowloris) is cut off after seconds, not minutes', async () => {
    const service = await serveThreats(KEY, NOW, []);
    const daemon = startCli([], env(service, tempDbPath()));
    const port = await servingPort(daemon);
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined); // a write after the server closed it
    let drip: NodeJS.Timeout | undefined;
    const closed = new Promise<number>((resolve) =>
      socket.once('close', () => {
        clearInterval(drip);
        resolve(performance.now());
      }),
    );
    const opened = performance.now();
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    drip = setInterval(() => socket.write('X-Slow: 1\r\n'), 200);
    const closedAt = await closed;
    // Cut off after the headers timeout (5 s), where Node's defaults let it drip for 60-90 s.
    expect(closedAt - opened).toBeLessThan(15_000);
    expect((await healthzWithin(port)).status).toBe(200);
    daemon.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  });
});
