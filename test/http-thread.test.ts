// The HTTP server of THREAT_MIRROR_HTTP_PORT runs on a thread of its own: /v1/lookup answers while
// the main thread (which fetches, parses and validates the sync's pages) is stuck, the probes still
// show that the main thread is stuck, and the thread dying is seen and mended (it is started again,
// the sync going on meanwhile); the writer thread dying stops the daemon.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Standin, type StandinThreat, startStandin } from '../src/standin/index.js';
import { type CliProcess, runCli, startCli } from './support/cli.js';
import { runs } from './support/mirror-db.js';
import { mirrorEnvFor } from './support/service.js';
import { tempDir } from './support/temp.js';
import { dig, freePort, ZONE } from './support/secondaries.js';
import { until } from './support/until.js';
import { SERVING_LOG_MESSAGE } from '../src/serve/endpoints.js';

/** Resolves with what `check` gives once it gives something, polling every 50 ms; throws past `timeoutMs`. */
async function pollUntil<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs: number): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const NOW = '2026-03-15T12:00:00.000Z';
const KEY = 'acme-key';
const FAULTS = fileURLToPath(new URL('./support/main-thread-faults.mjs', import.meta.url));
const SERVING_FAULTS = fileURLToPath(new URL('./support/serving-thread-faults.cjs', import.meta.url));
/** Long enough for a lookup on a loaded 2-core machine, short against a test's time. */
const BLOCK_MS = 4_000;

let standin: Standin | undefined;
let daemon: CliProcess | undefined;
afterEach(async () => {
  if (daemon && daemon.child.exitCode === null && daemon.child.signalCode === null) {
    daemon.kill('SIGTERM');
    await daemon.exited;
  }
  daemon = undefined;
  await standin?.close();
  standin = undefined;
});

const threats: StandinThreat[] = [{ id: 1, content: 'https://evil.example/', type: 'URL', blockedAt: `${NOW.slice(0, 10)}T10:00:00.000Z`, organization: 'acme' }];

/** The daemon with the fault fixture loaded, serving on a free port after its first sync. */
async function startDaemon(fault: 'block' | 'end-writer' | 'none', env: Record<string, string> = {}): Promise<{ port: number; dbPath: string }> {
  standin = await startStandin({ threats, keys: { organizationKeys: { [KEY]: 'acme' }, userKeys: {} }, now: () => new Date(NOW) });
  const dbPath = join(tempDir(), 'mirror.db');
  daemon = startCli([], mirrorEnvFor(KEY, NOW)(standin, dbPath, {
    THREAT_MIRROR_INITIAL_DAYS: '10',
    THREAT_MIRROR_HTTP_PORT: '0',
    // Never comes round during the test.
    THREAT_MIRROR_SCHEDULE: '0 0 1 1 *',
    NODE_OPTIONS: `--import=${FAULTS}`,
    MAIN_THREAD_FAULT: fault,
    MAIN_THREAD_BLOCK_MS: String(BLOCK_MS),
    ...env,
  }));
  const line = await daemon.waitForLog((log) => log.msg === SERVING_LOG_MESSAGE);
  await daemon.waitForLog((log) => typeof log.msg === 'string' && log.msg.startsWith('sync of organization') && log.status === 'succeeded');
  return { port: line.port as number, dbPath };
}

/** Resolves with the Date.now() of the fixture's stderr line "main thread <word> <ms>". */
function fixtureLine(process: CliProcess, word: 'blocked' | 'unblocked'): Promise<number> {
  const pattern = new RegExp(`^main thread ${word} (\\d+)$`, 'm');
  return new Promise((resolve, reject) => {
    const check = (): boolean => {
      const found = pattern.exec(process.stderr);
      if (found) resolve(Number(found[1]));
      return found !== null;
    };
    if (check()) return;
    const onData = (): void => {
      if (check()) process.child.stderr?.off('data', onData);
    };
    process.child.stderr?.on('data', onData);
    process.child.once('close', () => reject(new Error(`the daemon exited before "main thread ${word}"; stderr:\n${process.stderr}`)));
  });
}

async function answered(url: string): Promise<{ status: number; body: string; at: number }> {
  const response = await fetch(url);
  const body = await response.text();
  return { status: response.status, body, at: Date.now() };
}

describe('the HTTP server thread', () => {
  it('answers /v1/lookup while the main thread is stuck; /healthz answers only once it is free again', async () => {
    const { port } = await startDaemon('block');
    const running = daemon as CliProcess;
    const blocked = fixtureLine(running, 'blocked');
    const unblocked = fixtureLine(running, 'unblocked');
    running.kill('SIGUSR2');
    const blockedAt = await blocked;
    const health = answered(`http://127.0.0.1:${port}/healthz`);
    const lookup = await answered(`http://127.0.0.1:${port}/v1/lookup?value=${encodeURIComponent('https://a.evil.example/x')}`);
    expect(lookup.status).toBe(200);
    expect((JSON.parse(lookup.body) as { results: Array<{ blocked: boolean }> }).results[0]?.blocked).toBe(true);
    const unblockedAt = await unblocked;
    // Same clock (Date.now()) in both processes: the lookup came back while the main thread was
    // still busy-waiting, which it could not when the main thread served it.
    expect(lookup.at).toBeGreaterThanOrEqual(blockedAt);
    expect(lookup.at).toBeLessThan(unblockedAt);
    // The probe was asked of the main thread: answered as before, after it was free again.
    const probe = await health;
    expect(probe).toMatchObject({ status: 200, body: '{"status":"ok"}\n' });
    expect(probe.at).toBeGreaterThanOrEqual(unblockedAt);

    running.kill('SIGTERM');
    expect((await running.exited).code).toBe(0);
  });

  it('starts the serving thread again when it dies: /readyz names the cause meanwhile, the sync goes on, lookups and the zone are back within seconds', async () => {
    const dnsPort = await freePort();
    const { port, dbPath } = await startDaemon('none', {
      NODE_OPTIONS: `--require=${SERVING_FAULTS}`,
      SERVING_THREAD_FAULT: 'throw',
      THREAT_MIRROR_SCHEDULE: '*/2 * * * * *',
      THREAT_MIRROR_DNS_PORT: String(dnsPort),
      THREAT_MIRROR_DNS_ALLOW: '127.0.0.1/32',
    });
    const running = daemon as CliProcess;
    await running.waitForLog((line) => line.msg === 'zone changed');
    const lookup = `http://127.0.0.1:${port}/v1/lookup?value=${encodeURIComponent('https://a.evil.example/x')}`;
    expect((await fetch(lookup)).status).toBe(200);
    const runsBefore = runs(dbPath).length;

    running.kill('SIGUSR2');
    const [, faultAt] = await running.waitForStderr(/^serving thread fault (\d+)$/m);
    // While it is down the main thread answers the port: alive, not ready, and why.
    const down = await pollUntil(async () => {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
      const body = response === undefined ? '' : await response.text();
      return response?.status === 503 && body.includes('the serving thread') ? { body, healthz: (await fetch(`http://127.0.0.1:${port}/healthz`)).status, lookup: await fetch(lookup) } : undefined;
    }, 10_000);
    expect(JSON.parse(down.body).reasons.join('\n')).toMatch(/the serving thread \(lookups, feeds, the DNS primary\) failed at .*test fault: the serving thread threw what nothing catches; starting it again in \d+ s/);
    expect(down.healthz).toBe(200);
    expect(down.lookup.status).toBe(503);
    expect(Number(down.lookup.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    // Back within seconds, on the same ports.
    await running.waitForLog((line) => line.msg === 'the serving thread is serving again');
    const backAt = Date.now();
    expect(backAt - Number(faultAt)).toBeLessThan(10_000);
    expect((await fetch(lookup)).status).toBe(200);
    expect(dig(['@127.0.0.1', '-p', String(dnsPort), ZONE, 'SOA']).status).toBe('NOERROR');
    const ready = await pollUntil(async () => ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200 ? true : undefined), 10_000);
    expect(ready).toBe(true);
    expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toMatch(/^threat_mirror_serving_thread_restarts_total 1$/m);

    // The sync went on: a run after the fault succeeded, and the daemon stops cleanly.
    await pollUntil(() => (runs(dbPath).slice(runsBefore).some((run) => run.status === 'succeeded') ? true : undefined), 20_000);
    expect(running.logs.some((line) => line.msg === 'the serving thread failed: starting it again after a pause; the sync goes on')).toBe(true);
    running.kill('SIGTERM');
    expect((await running.exited).code).toBe(0);
  });
});

describe('the writer thread', () => {
  it('stops the daemon with exit 1, saying why, when it dies: no write could be made after it', async () => {
    // An allowlist to change: the write that starts the writer again once the daemon has ended it
    // after its first run (the fixture then ends the thread that write starts).
    const allowlist = join(tempDir(), 'allow.txt');
    writeFileSync(allowlist, '');
    const { dbPath } = await startDaemon('end-writer', { THREAT_MIRROR_ALLOWLIST: allowlist });
    const running = daemon as CliProcess;
    await until('the writer ended between runs', () => running.stderr.includes('first worker ended\n'), 20_000, () => running.stdout);
    running.kill('SIGUSR2');
    writeFileSync(allowlist, 'allowed.example\n');
    const result = await running.exited;
    expect(result.code).toBe(1);
    expect(result.logs.some((log) => typeof log.msg === 'string' && log.msg.startsWith('the writer thread failed: stopping the daemon (exit 1)'))).toBe(true);
    expect(result.logs.at(-1)?.msg).toBe('stopped');
    // What was committed stays, and the next process (the supervisor's restart) syncs on from it.
    expect(runs(dbPath).map((run) => run.status)).toEqual(['succeeded']);
    // The daemon's configuration: a larger INITIAL_DAYS would also walk the days it adds (a history run).
    const env = mirrorEnvFor(KEY, NOW)(standin as Standin, dbPath, { THREAT_MIRROR_INITIAL_DAYS: '10' });
    expect((await runCli(['--once'], env)).code).toBe(0);
    expect(runs(dbPath).map((run) => run.status)).toEqual(['succeeded', 'succeeded']);
  });
});
