// The HTTP server of THREAT_MIRROR_HTTP_PORT runs on a thread of its own: /v1/lookup answers while
// the main thread (which fetches, parses and validates the sync's pages) is stuck, the probes still
// show that the main thread is stuck, and the thread dying does not go unnoticed; nor does the
// writer thread's.
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Standin, type StandinThreat, startStandin } from '../src/standin/index.js';
import { type CliProcess, runCli, startCli } from './support/cli.js';
import { runs } from './support/mirror-db.js';
import { tempDir } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';
const KEY = 'acme-key';
const FAULTS = fileURLToPath(new URL('./support/main-thread-faults.mjs', import.meta.url));
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
async function startDaemon(fault: 'block' | 'end-workers' | 'end-writer'): Promise<{ port: number; dbPath: string }> {
  standin = await startStandin({ threats, keys: { organizationKeys: { [KEY]: 'acme' }, userKeys: {} }, now: () => new Date(NOW) });
  const dbPath = join(tempDir(), 'mirror.db');
  daemon = startCli([], {
    THREAT_MIRROR_API_URL: standin.url,
    THREAT_MIRROR_DB: dbPath,
    THREAT_MIRROR_ORG: 'acme',
    THREAT_MIRROR_API_KEY: KEY,
    THREAT_MIRROR_NOW: NOW,
    THREAT_MIRROR_INITIAL_DAYS: '10',
    THREAT_MIRROR_HTTP_PORT: '0',
    // Never comes round during the test.
    THREAT_MIRROR_SCHEDULE: '0 0 1 1 *',
    NODE_OPTIONS: `--import=${FAULTS}`,
    MAIN_THREAD_FAULT: fault,
    MAIN_THREAD_BLOCK_MS: String(BLOCK_MS),
  });
  const line = await daemon.waitForLog((log) => log.msg === 'serving /healthz, /readyz and /metrics');
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

  it('stops the daemon with exit 1, saying why, when the thread dies', async () => {
    const { port, dbPath } = await startDaemon('end-workers');
    const running = daemon as CliProcess;
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    running.kill('SIGUSR2');
    const result = await running.exited;
    expect(result.code).toBe(1);
    expect(result.logs.some((log) => typeof log.msg === 'string' && log.msg.startsWith('the HTTP server of THREAT_MIRROR_HTTP_PORT failed'))).toBe(true);
    expect(result.logs.at(-1)?.msg).toBe('stopped');
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    // The sync's work is intact: the first run committed, and nothing is left running.
    expect(runs(dbPath).map((run) => run.status)).toEqual(['succeeded']);
  });
});

describe('the writer thread', () => {
  it('stops the daemon with exit 1, saying why, when it dies: no write could be made after it', async () => {
    const { dbPath } = await startDaemon('end-writer');
    const running = daemon as CliProcess;
    running.kill('SIGUSR2');
    const result = await running.exited;
    expect(result.code).toBe(1);
    expect(result.logs.some((log) => typeof log.msg === 'string' && log.msg.startsWith('the writer thread failed: stopping the daemon (exit 1)'))).toBe(true);
    expect(result.logs.at(-1)?.msg).toBe('stopped');
    // What was committed stays, and the next process (the supervisor's restart) syncs on from it.
    expect(runs(dbPath).map((run) => run.status)).toEqual(['succeeded']);
    // The daemon's configuration: a larger INITIAL_DAYS would also walk the days it adds (a history run).
    const env = { THREAT_MIRROR_API_URL: (standin as Standin).url, THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_ORG: 'acme', THREAT_MIRROR_API_KEY: KEY, THREAT_MIRROR_NOW: NOW, THREAT_MIRROR_INITIAL_DAYS: '10' };
    expect((await runCli(['--once'], env)).code).toBe(0);
    expect(runs(dbPath).map((run) => run.status)).toEqual(['succeeded', 'succeeded']);
  });
});
