// The feeds (/v1/exports/*) live within the HTTP thread's limits of issue 27: they take places in
// the same budget of requests in flight as /v1/lookup (503 + Retry-After beyond it), feeds alone
// never take more than half of it, and the connection's time bounds, which cut off slow senders,
// let a large feed stream to a slow reader for longer than a request may take to arrive.
import { type ClientRequest, type IncomingMessage, request } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { StandinThreat } from '../src/standin/index.js';
import { MAX_LOOKUPS_IN_FLIGHT, REQUEST_TIMEOUT_MS } from '../src/serve/http-limits.js';
import { servingPort, startCli } from './support/cli.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath } from './support/temp.js';

const KEY = 'acme-feed-limits-key';
const NOW = '2026-03-15T12:00:00.000Z';
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: '2', THREAT_MIRROR_HTTP_PORT: '0', THREAT_MIRROR_SCHEDULE: '0 0 1 1 *' });
/** Feeds in flight at once (export-feeds.ts): half the places. */
const MAX_FEEDS = MAX_LOOKUPS_IN_FLIGHT / 2;

/**
 * Threats whose JSONL feed is ~12 MB: more than loopback's socket buffers hold (4 MB sent, ~128 KB
 * received), so a client that stops reading keeps its feed in flight.
 */
function longThreats(): StandinThreat[] {
  return Array.from({ length: 3_000 }, (_, index) => ({
    id: 500_000 + index,
    content: `https://tm-feed-limits-${index % 40}.com/${String(index).padStart(6, '0')}/${'p'.repeat(3_900)}`,
    type: 'URL',
    blockedAt: `2026-03-15T${String(Math.floor(index / 600)).padStart(2, '0')}:00:00.000Z`,
    organization: 'acme',
  }));
}

/** A request whose response head has arrived; its body is left unread until resumed. */
interface Held {
  readonly status: number;
  readonly response: IncomingMessage;
  readonly request: ClientRequest;
}

function holdFeed(port: number, path: string): Promise<Held> {
  return new Promise((resolve, reject) => {
    const sent = request({ host: '127.0.0.1', port, path }, (response) => {
      response.pause();
      resolve({ status: response.statusCode ?? 0, response, request: sent });
    });
    sent.on('error', reject);
    sent.end();
  });
}

/** A POST lookup that declares a body and sends only its start: it holds a place until it is dropped. */
function stalledLookup(port: number): ClientRequest {
  const sent = request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/lookup', headers: { 'content-type': 'application/json', 'content-length': 1_000 } });
  sent.on('error', () => undefined); // destroyed by the test
  sent.write('{"values": [');
  return sent;
}

/** Reads the rest of a held response at a pace that makes the whole take about `ms`. */
function readSlowly(held: Held, ms: number): Promise<{ bytes: number; ms: number }> {
  const total = Number(held.response.headers['content-length']);
  const started = performance.now();
  let bytes = 0;
  return new Promise((resolve, reject) => {
    held.response.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      const due = (bytes / total) * ms - (performance.now() - started);
      if (due <= 0) return;
      held.response.pause();
      setTimeout(() => held.response.resume(), due);
    });
    held.response.on('end', () => resolve({ bytes, ms: performance.now() - started }));
    held.response.on('error', reject);
    held.response.on('aborted', () => reject(new Error(`cut off after ${bytes} of ${total} bytes`)));
    held.response.resume();
  });
}

async function answer(port: number, path: string): Promise<{ status: number; retryAfter: string | null; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.text() };
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > 10_000) throw new Error(`${what}: not within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const LOOKUP = `/v1/lookup?value=${encodeURIComponent('https://tm-feed-limits-1.com/')}`;

describe('the feeds within the HTTP limits', () => {
  it('share the lookups\' places (503 + Retry-After when full), hold at most half of them, and stream to a slow reader past the request timeout', async () => {
    const service = await serveThreats(KEY, NOW, longThreats());
    const daemon = startCli([], env(service, tempDbPath()));
    const port = await servingPort(daemon);
    await daemon.waitForLog((line) => line.msg === 'sync of organization "acme" succeeded');
    const whole = await answer(port, '/v1/exports/jsonl');
    expect(whole.status).toBe(200);
    expect(whole.body.length).toBeGreaterThan(10_000_000);

    // One slow reader for the whole test: it reads the feed over REQUEST_TIMEOUT_MS + 3 s.
    const slow = await holdFeed(port, '/v1/exports/jsonl');
    expect(slow.status).toBe(200);
    const slowRead = readSlowly(slow, REQUEST_TIMEOUT_MS + 3_000);

    // The shared budget: lookups that stall fill the rest of it; a feed is then refused like a lookup.
    const stalled = Array.from({ length: MAX_LOOKUPS_IN_FLIGHT - 1 }, () => stalledLookup(port));
    await until('the stalled lookups fill the budget', async () => (await answer(port, LOOKUP)).status === 503);
    const refused = await answer(port, '/v1/exports/domains');
    expect(refused.status).toBe(503);
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect((JSON.parse(refused.body) as { error: string }).error).toMatch(/busy/);
    for (const lookup of stalled) lookup.destroy();
    await until('the places come back', async () => (await answer(port, '/v1/exports/domains')).status === 200);

    // Feeds alone: at most half the places; the next feed is refused while lookups are still answered.
    // The server sees the stalled lookups' connections close in its own time (one place back is not
    // all of them, on a loaded machine): a try that did not get every feed lets go and tries again.
    let held: Held[] = [];
    await until('the stalled lookups let go of every place', async () => {
      held = await Promise.all(Array.from({ length: MAX_FEEDS - 1 }, () => holdFeed(port, '/v1/exports/jsonl')));
      if (held.every((feed) => feed.status === 200)) return true;
      for (const feed of held) feed.request.destroy();
      return false;
    });
    const beyond = await answer(port, '/v1/exports/rpz');
    expect(beyond.status).toBe(503);
    expect(beyond.retryAfter).toBe('1');
    expect((await answer(port, LOOKUP)).status).toBe(200);
    for (const feed of held) feed.request.destroy();
    await until('a feed place comes back', async () => (await answer(port, '/v1/exports/rpz')).status === 200);

    const read = await slowRead;
    expect(read.bytes).toBe(Buffer.byteLength(whole.body));
    expect(read.ms).toBeGreaterThan(REQUEST_TIMEOUT_MS);
    expect(daemon.running).toBe(true);
    daemon.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  }, 90_000);
});
