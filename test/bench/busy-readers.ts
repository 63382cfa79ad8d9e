// `npm run bench:busy-readers`: the daemon on a 1-second schedule (two organizations) beside readers
// that hold the WAL: none, a reader holding BEGIN + an open SELECT, and Litestream replicating
// (when its binary is installed). Measures /healthz latency (probed every 250 ms), runs against
// ticks, the WAL's size and how long SIGTERM takes. Issue 13's figures: /healthz < 50 ms every
// time, runs on schedule, SIGTERM < 10 s.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addDays } from '../../src/lib/days.js';
import { generateThreats, startStandin } from '../../src/standin/index.js';
import { SERVING_LOG_MESSAGE } from '../../src/serve/endpoints.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const CLI = join(root, 'dist', 'bin', 'cli.js');
const HOLDING_READER = join(root, 'test', 'support', 'holding-reader.mjs');
const LITESTREAM = join(root, 'node_modules', '@flydotio', `litestream-${process.platform}-${process.arch}`, 'litestream');
const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);

type Beside = 'nothing' | 'reader holding a read transaction' | 'litestream replicate';

interface Row {
  beside: Beside;
  probes: number;
  medianMs: number;
  p99Ms: number;
  maxMs: number;
  over50: number;
  runs: number;
  ticks: number;
  walBytes: number;
  sigtermMs: number;
}

const percentile = (values: number[], p: number): number => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? NaN;

async function scenario(beside: Beside): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-busy-readers-'));
  const dbPath = join(dir, 'mirror.db');
  const standin = await startStandin({
    threats: generateThreats({ seed: 5, organizations: ['acme', 'globex'], count: 4000, fromDay: addDays(TODAY, -4), toDay: TODAY }),
    keys: { organizationKeys: { 'acme-key': 'acme', 'globex-key': 'globex' }, userKeys: {} },
    now: () => new Date(NOW),
  });
  let stdout = '';
  const daemon = spawn(CLI, [], {
    env: {
      PATH: process.env.PATH ?? '',
      THREAT_MIRROR_API_URL: standin.url,
      THREAT_MIRROR_DB: dbPath,
      THREAT_MIRROR_ORGS: 'acme,globex',
      THREAT_MIRROR_API_KEY_ACME: 'acme-key',
      THREAT_MIRROR_API_KEY_GLOBEX: 'globex-key',
      THREAT_MIRROR_INITIAL_DAYS: '5',
      THREAT_MIRROR_SCHEDULE: '*/1 * * * * *',
      THREAT_MIRROR_HTTP_PORT: '0',
      THREAT_MIRROR_CHECKPOINTS: beside === 'litestream replicate' ? 'external' : 'auto',
      THREAT_MIRROR_NOW: NOW,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  daemon.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const exited = new Promise<void>((resolve) => daemon.on('close', () => resolve()));
  const lines = (): Array<Record<string, unknown>> => stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
  const waitFor = async (predicate: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> => {
    for (;;) {
      const found = lines().find(predicate);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const port = (await waitFor((line) => line.msg === SERVING_LOG_MESSAGE)).port as number;
  await waitFor((line) => line.status === 'succeeded');

  let companion: ChildProcess | undefined;
  if (beside === 'reader holding a read transaction') {
    companion = spawn(process.execPath, [HOLDING_READER, dbPath], { stdio: ['pipe', 'pipe', 'inherit'] });
    companion.stdin?.write('hold\n');
    await new Promise((resolve) => companion?.stdout?.once('data', resolve));
  } else if (beside === 'litestream replicate') {
    const config = join(dir, 'litestream.yml');
    writeFileSync(config, `dbs:\n  - path: ${dbPath}\n    replicas:\n      - type: file\n        path: ${join(dir, 'replica')}\n        sync-interval: 1s\n`);
    companion = spawn(LITESTREAM, ['replicate', '-config', config], { stdio: 'ignore' });
  }

  const runsBefore = lines().filter((line) => line.status === 'succeeded').length;
  const latencies: number[] = [];
  const started = Date.now();
  let added = 0;
  while (Date.now() - started < SECONDS * 1000) {
    if (latencies.length % 8 === 0) {
      // New threats every ~2 s: the runs write while the reader holds its snapshot.
      standin.addThreats([{ id: 5_000_000 + added++, content: `https://bench-${added}.example`, type: 'URL', blockedAt: `${TODAY}T11:00:00.000Z`, organization: 'acme' }]);
    }
    const probeStarted = performance.now();
    const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(3000) }).catch(() => undefined);
    await response?.text();
    latencies.push(response?.status === 200 ? performance.now() - probeStarted : 3000);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const elapsed = (Date.now() - started) / 1000;
  const runs = lines().filter((line) => line.status === 'succeeded').length - runsBefore;
  const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const walBytes = Number(/^threat_mirror_wal_bytes (\S+)$/m.exec(metrics)?.[1] ?? NaN);
  const stopAsked = performance.now();
  daemon.kill('SIGTERM');
  await exited;
  const sigtermMs = performance.now() - stopAsked;
  if (companion) {
    const closed = new Promise((resolve) => companion?.on('close', resolve));
    companion.kill('SIGTERM');
    await closed;
  }
  await standin.close();
  rmSync(dir, { recursive: true, force: true });
  return {
    beside,
    probes: latencies.length,
    medianMs: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    maxMs: Math.max(...latencies),
    over50: latencies.filter((ms) => ms >= 50).length,
    // Two organizations: a tick runs both.
    runs: runs / 2,
    ticks: Math.floor(elapsed),
    walBytes,
    sigtermMs,
  };
}

const scenarios: Beside[] = ['nothing', 'reader holding a read transaction'];
if (existsSync(LITESTREAM)) scenarios.push('litestream replicate');
else console.error(`no Litestream binary at ${LITESTREAM}: its scenario is left out`);
const rows: Row[] = [];
for (const beside of scenarios) rows.push(await scenario(beside));
console.log(`\n${SECONDS} s per scenario, schedule */1 s, two organizations, /healthz every 250 ms\n`);
console.log('| beside the daemon | probes | /healthz median ms | p99 ms | max ms | ≥ 50 ms | runs / ticks | WAL bytes at end | SIGTERM ms |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const row of rows) {
  console.log(
    `| ${row.beside} | ${row.probes} | ${row.medianMs.toFixed(1)} | ${row.p99Ms.toFixed(1)} | ${row.maxMs.toFixed(1)} | ${row.over50} | ${row.runs} / ${row.ticks} | ${row.walBytes} | ${row.sigtermMs.toFixed(0)} |`,
  );
}
