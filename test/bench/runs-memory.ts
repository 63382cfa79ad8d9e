// `npm run bench:runs-memory`: whether the daemon's memory grows with its runs. The built daemon
// (HTTP and DNS ports on, the rpz and hosts exports) runs every second against the stand-in
// (20,000 threats over 30 days; each run re-scans 3 days: ~20 pages, nothing new) for
// BENCH_MINUTES (default 30). The benchmark reads the daemon's anonymous memory (RssAnon) every
// 10 s and prints it at a few points, with the growth a run: the slope of a least-squares line
// through the readings of the second half, over the runs a second (the first ~12 minutes hold the
// heaps settling to their working size, with a step of ~10 MiB near the 11th). A reading depends
// on where in its run the daemon is (the writer thread running or not): single readings move by
// ±10 MiB, the slope through a hundred does not. BENCH_CLI=path measures another build of the
// CLI, BENCH_NODE=path another Node.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { addDays } from '../../src/lib/days.js';
import { generateThreats, startStandin } from '../../src/standin/index.js';

const KEY = 'bench-runs-memory-key';
const CLI = process.env.BENCH_CLI ?? fileURLToPath(new URL('../../bin/cli.js', import.meta.url));
const NODE = process.env.BENCH_NODE ?? process.execPath;
const MINUTES = Number(process.env.BENCH_MINUTES ?? 30);
const READ_EVERY_MS = 10_000;

function anonymousMib(pid: number): number {
  const match = /^RssAnon:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) / 1024;
}

/** The least-squares slope of y over x. */
function slope(points: ReadonlyArray<readonly [number, number]>): number {
  const n = points.length;
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / n;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / n;
  const covariance = points.reduce((sum, [x, y]) => sum + (x - meanX) * (y - meanY), 0);
  const variance = points.reduce((sum, [x]) => sum + (x - meanX) ** 2, 0);
  return covariance / variance;
}

const out = (text: string): boolean => process.stdout.write(`${text}\n`);
const today = new Date().toISOString().slice(0, 10);
const threats = generateThreats({ seed: 7, organizations: ['bench'], count: 20_000, fromDay: addDays(today, -29), toDay: today, hostile: true });
const standin = await startStandin({ threats, keys: { organizationKeys: { [KEY]: 'bench' }, userKeys: {} } });
const dir = mkdtempSync(join(tmpdir(), 'tm-bench-runs-memory-'));
const daemon = spawn(NODE, [CLI], {
  env: {
    PATH: process.env.PATH ?? '',
    THREAT_MIRROR_API_URL: standin.url,
    THREAT_MIRROR_API_KEY: KEY,
    THREAT_MIRROR_ORG: 'bench',
    THREAT_MIRROR_DB: join(dir, 'mirror.db'),
    THREAT_MIRROR_SCHEDULE: '* * * * * *',
    THREAT_MIRROR_HTTP_PORT: '0',
    THREAT_MIRROR_DNS_PORT: '0',
    THREAT_MIRROR_DNS_ALLOW: '127.0.0.1/32',
    THREAT_MIRROR_EXPORTS: `rpz=${join(dir, 'threats.rpz')},hosts=${join(dir, 'threats.hosts')}`,
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let runs = 0;
daemon.stdout.setEncoding('utf8').on('data', (chunk: string) => {
  runs += chunk.split('\n').filter((line) => line.includes('"status":"succeeded"')).length;
});
const exited = new Promise<number | null>((resolve) => daemon.once('exit', resolve));
out(`bench:runs-memory: Node ${NODE === process.execPath ? process.versions.node : NODE}, ${MINUTES} minutes at a run a second; load average ${loadavg()[0]?.toFixed(2)} at the start`);
const readings: Array<readonly [number, number]> = [];
const started = performance.now();
try {
  for (let at = READ_EVERY_MS; at <= MINUTES * 60_000; at += READ_EVERY_MS) {
    const stopped = await Promise.race([sleep(started + at - performance.now()).then(() => false), exited.then(() => true)]);
    if (stopped) throw new Error(`the daemon exited (code ${daemon.exitCode}) after ${runs} runs`);
    readings.push([at / 1000, anonymousMib(daemon.pid as number)]);
  }
} finally {
  daemon.kill('SIGTERM');
  await exited;
  await standin.close();
  rmSync(dir, { recursive: true, force: true });
}
const seconds = MINUTES * 60;
const shown = [60, 300, 600, 900, 1200, 1800, 2400, 3600].filter((second) => second <= seconds);
const at = (second: number): string => (readings.find(([time]) => time >= second)?.[1] ?? Number.NaN).toFixed(1);
const secondHalf = readings.filter(([time]) => time > seconds / 2);
const kbPerRun = (slope(secondHalf) * 1024) / (runs / seconds);
out(`load average ${loadavg()[0]?.toFixed(2)} at the end; ${runs} runs`);
out(`| RssAnon MiB at ${shown.map((second) => `${second} s`).join(' | ')} | runs | growth a run (second half) |`);
out(`|${'---:|'.repeat(shown.length + 2)}`);
out(`| ${shown.map(at).join(' | ')} | ${runs} | ${kbPerRun.toFixed(1)} KB |`);
