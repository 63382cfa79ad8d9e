// Part of `npm run bench:readers`: the real daemon serves /v1/lookup from the benchmark's file while
// its first sync backfills new threats from the stand-in, and autocannon (a child process) loads it.
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Database } from '../../src/db/sqlite.js';
import type { Result } from 'autocannon';
import { addDays } from '../../src/lib/days.js';
import { generateThreats, startStandin } from '../../src/standin/index.js';
import { SERVING_LOG_MESSAGE } from '../../src/serve/endpoints.js';

export interface LoadResult {
  readonly result: Result;
  /** The same load against a server that answers `{}` at once: what the load generator itself adds. */
  readonly floor: Result;
  /**
   * The same again while the daemon's backfill writes (just before the daemon's own load): what the
   * machine adds to any server under that backfill, whatever the server does.
   */
  readonly floorDuringBackfill: Result;
  /** How long the no-op server was loaded during the backfill (BENCH_BACKFILL_FLOOR_SECONDS). */
  readonly floorDuringBackfillSeconds: number;
  readonly rate: number;
  readonly seconds: number;
  /** autocannon's connections: with 16 at 500 req/s its own timers bunched requests (p99 15 ms against the no-op server). */
  readonly connections: number;
  readonly backfillThreats: number;
  readonly writtenDuringLoad: number;
  readonly backfillRunningAtEnd: boolean;
  /** The stand-in's delay before each page (BENCH_SERVICE_LATENCY_MS): 0 lets the backfill use every core it can. */
  readonly serviceLatencyMs: number;
  /** The machine's 1-minute load average when the load ended (other work on a shared machine shows here). */
  readonly loadAverage: number;
}

const NOW = '2026-03-15T12:00:00.000Z';
const KEY = 'bench-load-key';
const FIRST_BACKFILL_ID = 50_000_000;
const CLI = fileURLToPath(new URL('../../bin/cli.js', import.meta.url));
const LOAD = fileURLToPath(new URL('./lookup-load.js', import.meta.url));
const NOOP_SERVER = fileURLToPath(new URL('./noop-server.js', import.meta.url));

type LoadOptions = { rate: number; seconds: number; connections: number };

/** autocannon in a child process against `url`, rotating through `values`. */
async function runLoad(url: string, values: readonly string[], { rate, seconds, connections }: LoadOptions): Promise<Result> {
  const load = spawn(process.execPath, [LOAD, url, String(rate), String(seconds), String(connections)], { stdio: ['pipe', 'pipe', 'inherit'] });
  load.stdin.end(JSON.stringify(values));
  let output = '';
  load.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  await new Promise((resolve) => load.once('exit', resolve));
  return JSON.parse(output) as Result;
}

/** The same load against the no-op server (test/bench/noop-server.ts). */
async function loadGeneratorFloor(values: readonly string[], options: LoadOptions): Promise<Result> {
  const server = spawn(process.execPath, [NOOP_SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<string>((resolve, reject) => {
      server.stdout.setEncoding('utf8').once('data', (line: string) => resolve(line.trim()));
      server.once('exit', (code) => reject(new Error(`the no-op server exited with ${code}`)));
    });
    return await runLoad(`http://127.0.0.1:${port}`, values, options);
  } finally {
    server.kill('SIGTERM');
  }
}

export async function loadWhileBackfilling(options: LoadOptions & { dbPath: string; values: readonly string[] }): Promise<LoadResult> {
  const floor = await loadGeneratorFloor(options.values, options);
  const count = Number(process.env.BENCH_BACKFILL_THREATS ?? 400_000);
  const threats = generateThreats({ seed: 77, organizations: ['bench'], count, fromDay: addDays(NOW.slice(0, 10), -30), toDay: addDays(NOW.slice(0, 10), -1) }).map(
    (threat) => ({ ...threat, id: threat.id + FIRST_BACKFILL_ID }),
  );
  // A real service answers a page in tens of milliseconds; 0 (the default) is the worst case.
  const serviceLatencyMs = Number(process.env.BENCH_SERVICE_LATENCY_MS ?? 0);
  const standin = await startStandin({ latencyMs: serviceLatencyMs, threats, keys: { organizationKeys: { [KEY]: 'bench' }, userKeys: {} }, now: () => new Date(NOW) });
  const daemon = spawn(process.execPath, [CLI], {
    env: {
      PATH: process.env.PATH ?? '',
      THREAT_MIRROR_API_URL: standin.url,
      THREAT_MIRROR_API_KEY: KEY,
      THREAT_MIRROR_ORG: 'bench',
      THREAT_MIRROR_DB: options.dbPath,
      THREAT_MIRROR_NOW: NOW,
      THREAT_MIRROR_INITIAL_DAYS: '30',
      THREAT_MIRROR_SCHEDULE: '0 0 1 1 *',
      THREAT_MIRROR_HTTP_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let syncDone = false;
  const port = await new Promise<number>((resolve, reject) => {
    let buffer = '';
    daemon.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith('{')) continue;
        const log = JSON.parse(line) as { msg?: string; port?: number; status?: string };
        if (log.msg === SERVING_LOG_MESSAGE && log.port !== undefined) resolve(log.port);
        if (log.msg?.startsWith('sync of organization')) syncDone = true;
      }
    });
    daemon.once('exit', (code) => reject(new Error(`the daemon exited with ${code} before serving`)));
  });
  try {
    const floorDuringBackfillSeconds = Number(process.env.BENCH_BACKFILL_FLOOR_SECONDS ?? 10);
    const floorDuringBackfill = await loadGeneratorFloor(options.values, { ...options, seconds: floorDuringBackfillSeconds });
    const result = await runLoad(`http://127.0.0.1:${port}`, options.values, options);
    const backfillRunningAtEnd = !syncDone;
    const loadAverage = loadavg()[0] ?? NaN;
    const reader = new Database(options.dbPath, { readonly: true });
    const writtenDuringLoad = reader.prepare('SELECT count(*) FROM threats WHERE id >= ?').pluck().get(FIRST_BACKFILL_ID) as number;
    reader.close();
    return { result, floor, floorDuringBackfill, floorDuringBackfillSeconds, rate: options.rate, seconds: options.seconds, connections: options.connections, backfillThreats: threats.length, writtenDuringLoad, backfillRunningAtEnd, serviceLatencyMs, loadAverage };
  } finally {
    daemon.kill('SIGTERM');
    await new Promise((resolve) => (daemon.exitCode === null ? daemon.once('exit', resolve) : resolve(undefined)));
    await standin.close();
  }
}
