// `npm run bench:footprint`: what the daemon costs a pod while it waits. The real daemon (the
// built CLI, HTTP port on, its schedule never coming round) makes its first sync of 20,000 and of
// 1,000,000 threats from the stand-in; the benchmark reads from /proc its peak RSS during that
// sync (VmHWM), its RSS right after, then, once it is idle (the sync and the export refresh after
// it done, BENCH_IDLE_SECONDS later, default 60: V8 shrinks the heaps of idle threads in steps over
// the first ~30 s), its RSS (of it anonymous and file-backed), its threads, and /healthz. Each size runs
// BENCH_RUNS times (default 3) and the table shows the median of each figure, with the load
// average. BENCH_SIZES=20000 runs one size; BENCH_CLI=path measures another build of the CLI.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { addDays } from '../../src/lib/days.js';
import { generateThreats, startStandin } from '../../src/standin/index.js';
import { SERVING_LOG_MESSAGE } from '../../src/serve/endpoints.js';

const NOW = '2026-03-15T12:00:00.000Z';
const KEY = 'bench-footprint-key';
const CLI = process.env.BENCH_CLI ?? fileURLToPath(new URL('../../bin/cli.js', import.meta.url));
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SIZES = (process.env.BENCH_SIZES ?? '20000,1000000').split(',').map(Number);
/** How long after the first sync the idle figures are read: a schedule's ticks are minutes apart. */
const IDLE_MS = Number(process.env.BENCH_IDLE_SECONDS ?? 60) * 1000;

interface Footprint {
  readonly peakMb: number;
  /** RSS right after the first sync, before the idle threads' heaps shrink. */
  readonly afterSyncMb: number;
  readonly idleMb: number;
  readonly anonMb: number;
  readonly fileMb: number;
  readonly threads: number;
  readonly syncSeconds: number;
}

function status(pid: number): Record<string, number> {
  const fields: Record<string, number> = {};
  for (const line of readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const match = /^(\w+):\s+(\d+)/.exec(line);
    if (match) fields[match[1] as string] = Number(match[2]);
  }
  return fields;
}

/** Resolves with the HTTP port once the first sync has succeeded; rejects if the daemon exits. */
function firstSync(daemon: ReturnType<typeof spawn>): Promise<number> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    let port = 0;
    daemon.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines.filter((text) => text.startsWith('{'))) {
        const log = JSON.parse(line) as { msg?: string; port?: number; status?: string };
        if (log.msg === SERVING_LOG_MESSAGE) port = log.port ?? 0;
        if (log.msg?.startsWith('sync of organization') && log.status === 'succeeded') resolve(port);
        if (log.msg?.startsWith('sync of organization') && log.status === 'failed') reject(new Error(line));
      }
    });
    daemon.once('exit', (code) => reject(new Error(`the daemon exited with ${code}`)));
  });
}

/** Waits until IDLE_MS after the sync, then reads the idle figures (median of 5 readings). */
async function idle(pid: number, syncedAt: number): Promise<Pick<Footprint, 'idleMb' | 'anonMb' | 'fileMb' | 'threads'>> {
  await sleep(Math.max(0, syncedAt + IDLE_MS - performance.now()));
  const readings: Array<Record<string, number>> = [];
  for (let index = 0; index < 5; index += 1) {
    readings.push(status(pid));
    await sleep(200);
  }
  const at = (field: string): number => median(readings.map((reading) => (reading[field] ?? 0) / 1024));
  return { idleMb: at('VmRSS'), anonMb: at('RssAnon'), fileMb: at('RssFile') + at('RssShmem'), threads: at('Threads') * 1024 };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function measureOnce(url: string, days: number): Promise<Footprint> {
  const dir = mkdtempSync(join(tmpdir(), 'tm-bench-footprint-'));
  const started = performance.now();
  const daemon = spawn(CLI, [], {
    env: {
      PATH: process.env.PATH ?? '',
      THREAT_MIRROR_API_URL: url,
      THREAT_MIRROR_API_KEY: KEY,
      THREAT_MIRROR_ORG: 'bench',
      THREAT_MIRROR_DB: join(dir, 'mirror.db'),
      THREAT_MIRROR_NOW: NOW,
      THREAT_MIRROR_INITIAL_DAYS: String(days),
      // Never comes round: after the first sync the daemon waits, as it does between cron ticks.
      THREAT_MIRROR_SCHEDULE: '0 0 1 1 *',
      THREAT_MIRROR_HTTP_PORT: '0',
      ...(process.env.BENCH_DAEMON_ENV === undefined ? {} : (JSON.parse(process.env.BENCH_DAEMON_ENV) as Record<string, string>)),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const port = await firstSync(daemon);
    const syncedAt = performance.now();
    const syncSeconds = (syncedAt - started) / 1000;
    const pid = daemon.pid as number;
    const synced = status(pid);
    const peakMb = (synced.VmHWM ?? 0) / 1024;
    const afterSyncMb = (synced.VmRSS ?? 0) / 1024;
    const figures = await idle(pid, syncedAt);
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    await health.text();
    if (health.status !== 200) throw new Error(`/healthz answered ${health.status} while idle`);
    return { peakMb, afterSyncMb, syncSeconds, ...figures };
  } finally {
    daemon.kill('SIGTERM');
    await new Promise((resolve) => (daemon.exitCode === null ? daemon.once('exit', resolve) : resolve(undefined)));
    rmSync(dir, { recursive: true, force: true });
  }
}

const out = (text: string): boolean => process.stdout.write(`${text}\n`);
out(`bench:footprint: Node ${process.versions.node}, ${RUNS} runs a size, medians; load average ${loadavg()[0]?.toFixed(2)} at the start`);
const rows: string[] = [];
for (const count of SIZES) {
  const days = count >= 500_000 ? 365 : 200;
  const threats = generateThreats({ seed: 99, organizations: ['bench'], count, fromDay: addDays(NOW.slice(0, 10), -(days - 1)), toDay: NOW.slice(0, 10), hostile: true });
  const standin = await startStandin({ threats, keys: { organizationKeys: { [KEY]: 'bench' }, userKeys: {} }, now: () => new Date(NOW) });
  try {
    const runs: Footprint[] = [];
    for (let run = 0; run < RUNS; run += 1) {
      const footprint = await measureOnce(standin.url, days);
      runs.push(footprint);
      out(`  ${count} threats, run ${run + 1}: right after the sync ${footprint.afterSyncMb.toFixed(0)} MB, idle ${footprint.idleMb.toFixed(0)} MB (anon ${footprint.anonMb.toFixed(0)}, file ${footprint.fileMb.toFixed(0)}), ${footprint.threads} threads; peak ${footprint.peakMb.toFixed(0)} MB; sync ${footprint.syncSeconds.toFixed(1)} s; load ${loadavg()[0]?.toFixed(2)}`);
    }
    const of = (field: keyof Footprint): number => median(runs.map((run) => run[field]));
    const range = (field: keyof Footprint): string => `${Math.min(...runs.map((run) => run[field])).toFixed(0)}–${Math.max(...runs.map((run) => run[field])).toFixed(0)}`;
    rows.push(`| ${count.toLocaleString('en')} threats | ${of('idleMb').toFixed(0)} (${range('idleMb')}) | ${of('afterSyncMb').toFixed(0)} | ${of('anonMb').toFixed(0)} / ${of('fileMb').toFixed(0)} | ${of('threads')} | ${of('peakMb').toFixed(0)} (${range('peakMb')}) | ${of('syncSeconds').toFixed(1)} |`);
  } finally {
    await standin.close();
  }
}
out(`load average ${loadavg()[0]?.toFixed(2)} at the end`);
out(`| first sync of | idle RSS MB (range), ${IDLE_MS / 1000} s after the sync | RSS MB right after the sync | idle anonymous / file-backed MB | idle threads | peak RSS MB during the sync (range) | first sync s (start to done) |`);
out('|---|---:|---:|---:|---:|---:|---:|');
for (const row of rows) out(row);
