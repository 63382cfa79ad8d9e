// `npm run bench:flood`: the real daemon serving a mirror of BENCH_THREATS threats (default
// 100,000): GET /v1/lookup at 500 req/s while nothing else runs (autocannon in a child process, 4
// connections), then floods of 40 concurrent POST /v1/lookup of the largest size the endpoint
// takes (1,000 URLs of 4,096 characters, 4.0 MiB), each followed by /healthz: what the daemon's
// RSS peaks at during a flood, how the requests are answered, and how soon /healthz answers.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Result } from 'autocannon';
import { addDays } from '../../src/lib/days.js';
import { generateThreats, startStandin } from '../../src/standin/index.js';
import { SERVING_LOG_MESSAGE } from '../../src/serve/endpoints.js';

const NOW = '2026-03-15T12:00:00.000Z';
const KEY = 'bench-flood-key';
const COUNT = Number(process.env.BENCH_THREATS ?? 100_000);
const FLOODS = Number(process.env.BENCH_FLOODS ?? 3);
const RATE = 500;
const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 15);
const CLI = fileURLToPath(new URL('../../bin/cli.js', import.meta.url));
const LOAD = fileURLToPath(new URL('./lookup-load.js', import.meta.url));

/** VmRSS and its anonymous part (RssAnon: heaps, buffers; the rest is mostly the database's mapped pages), MB. */
function rssMb(pid: number): { total: number; anon: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string): number => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
    return { total: kb('VmRSS') / 1024, anon: kb('RssAnon') / 1024 };
  } catch {
    return { total: 0, anon: 0 };
  }
}

const higher = (a: { total: number; anon: number }, b: { total: number; anon: number }): { total: number; anon: number } => ({
  total: Math.max(a.total, b.total),
  anon: Math.max(a.anon, b.anon),
});

function post(port: number, body: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const sent = request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/lookup', headers: { 'content-type': 'application/json', 'content-length': body.length } }, (response) => {
      response.resume();
      response.on('end', () => resolve(String(response.statusCode)));
    });
    sent.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    sent.end(body);
  });
}

async function load(url: string, values: readonly string[]): Promise<Result> {
  const child = spawn(process.execPath, [LOAD, url, String(RATE), String(SECONDS), '4'], { stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdin.end(JSON.stringify(values));
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  await new Promise((resolve) => child.once('exit', resolve));
  return JSON.parse(output) as Result;
}

const threats = generateThreats({ seed: 91, organizations: ['bench'], count: COUNT, fromDay: addDays(NOW.slice(0, 10), -29), toDay: NOW.slice(0, 10) });
const standin = await startStandin({ threats, keys: { organizationKeys: { [KEY]: 'bench' }, userKeys: {} }, now: () => new Date(NOW) });
const dir = mkdtempSync(join(tmpdir(), 'tm-bench-flood-'));
const daemon = spawn(CLI, [], {
  env: {
    PATH: process.env.PATH ?? '',
    THREAT_MIRROR_API_URL: standin.url,
    THREAT_MIRROR_API_KEY: KEY,
    THREAT_MIRROR_ORG: 'bench',
    THREAT_MIRROR_DB: join(dir, 'mirror.db'),
    THREAT_MIRROR_NOW: NOW,
    THREAT_MIRROR_INITIAL_DAYS: '30',
    // Never comes round: after the first sync the daemon is idle but for what the benchmark sends.
    THREAT_MIRROR_SCHEDULE: '0 0 1 1 *',
    THREAT_MIRROR_HTTP_PORT: '0',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
try {
  let port = 0;
  await new Promise<void>((resolve, reject) => {
    let buffer = '';
    daemon.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines.filter((text) => text.startsWith('{'))) {
        const log = JSON.parse(line) as { msg?: string; port?: number; status?: string };
        if (log.msg === SERVING_LOG_MESSAGE) port = log.port ?? 0;
        if (log.msg?.startsWith('sync of organization') && log.status === 'succeeded') resolve();
      }
    });
    daemon.once('exit', (code) => reject(new Error(`the daemon exited with ${code}`)));
  });
  const pid = daemon.pid as number;
  const idleRss = rssMb(pid);
  const values = threats.filter((_, index) => index % 97 === 0).map((threat) => threat.content);
  const idle = await load(`http://127.0.0.1:${port}`, values);

  const body = Buffer.from(JSON.stringify({ values: Array.from({ length: 1000 }, (_, index) => `https://flood-${index}.example/`.padEnd(4096, 'p')) }));
  const floods: Array<{ statuses: Record<string, number>; ms: number; peak: { total: number; anon: number }; healthzMs: number; healthzStatus: number }> = [];
  for (let round = 0; round < FLOODS; round += 1) {
    let peak = rssMb(pid);
    const poll = setInterval(() => {
      peak = higher(peak, rssMb(pid));
    }, 5);
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: 40 }, () => post(port, body)));
    const ms = performance.now() - started;
    const healthStarted = performance.now();
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    await health.text();
    const healthzMs = performance.now() - healthStarted;
    clearInterval(poll);
    const statuses: Record<string, number> = {};
    for (const answer of answers) statuses[answer] = (statuses[answer] ?? 0) + 1;
    floods.push({ statuses, ms, peak: higher(peak, rssMb(pid)), healthzMs, healthzStatus: health.status });
  }
  const alive = daemon.exitCode === null;

  const out = (text: string): boolean => process.stdout.write(`${text}\n`);
  out(`bench:flood: ${COUNT} threats mirrored, Node ${process.versions.node}, load average ${loadavg()[0]?.toFixed(2)} at the end`);
  out('| measure | value |');
  out('|---|---|');
  out(`| daemon RSS (of it anonymous), idle after its first sync | ${idleRss.total.toFixed(0)} (${idleRss.anon.toFixed(0)}) MB |`);
  out(`| GET /v1/lookup, one value, ${RATE} req/s for ${SECONDS} s, idle: p50 / p90 / p99 / max ms | ${idle.latency.p50} / ${idle.latency.p90} / ${idle.latency.p99} / ${idle.latency.max} (${idle['2xx']} answered, ${idle.non2xx} other, ${idle.errors} errors) |`);
  for (const [index, flood] of floods.entries()) {
    const statuses = Object.entries(flood.statuses).map(([status, count]) => `${count} × ${status}`).join(', ');
    out(`| flood ${index + 1}: 40 × 4.0 MiB POST /v1/lookup at once: answers; all answered in | ${statuses}; ${flood.ms.toFixed(0)} ms |`);
    out(`| flood ${index + 1}: daemon peak RSS (peak anonymous) during it; /healthz right after | ${flood.peak.total.toFixed(0)} (${flood.peak.anon.toFixed(0)}) MB; ${flood.healthzStatus} in ${flood.healthzMs.toFixed(0)} ms |`);
  }
  out(`| daemon still running after the floods | ${alive ? 'yes' : 'NO'} |`);
  if (!alive) process.exitCode = 1;
} finally {
  daemon.kill('SIGTERM');
  await new Promise((resolve) => (daemon.exitCode === null ? daemon.once('exit', resolve) : resolve(undefined)));
  await standin.close();
  rmSync(dir, { recursive: true, force: true });
}
