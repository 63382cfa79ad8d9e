// `npm run bench:event-loop`: how long the main thread's event loop is held up while a large first
// sync writes (perf_hooks.monitorEventLoopDelay, preloaded by event-loop-probe.ts), and what that
// does to /healthz, which the main thread answers. Two workloads at no service latency (the writer
// thread busiest): 200,000 threats over 100 days and 1,000,000 over 365 days; each as a
// `--backfill` (delay only) and as a daemon's first sync (delay, and /healthz probed every 100 ms).
// `--cli PATH` measures another build's CLI (an older one, for a before/after); `--runs N`.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { addDays } from '../../src/lib/days.js';
import { generateThreats, type Standin, startStandin } from '../../src/standin/index.js';
import { SERVING_LOG_MESSAGE } from '../../src/serve/endpoints.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const PROBE = join(HERE, 'event-loop-probe.js');
const PROBER = join(HERE, 'healthz-prober.js');
const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEY = 'bench-key';

const { values } = parseArgs({
  options: { cli: { type: 'string', default: join(HERE, '..', '..', 'bin', 'cli.js') }, runs: { type: 'string', default: '1' }, scenario: { type: 'string' } },
});
const CLI = values.cli as string;
const RUNS = Number(values.runs);

interface LoopDelay {
  readonly samples: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

interface Measured {
  readonly seconds: number;
  readonly loop: LoopDelay;
  /** /healthz round trips in ms (the daemon's run only). */
  readonly probes: readonly number[];
}

/** The node flags of the CLI's shebang, so that each build runs with its own. */
function shebangFlags(cli: string): string[] {
  const first = readFileSync(cli, 'utf8').split('\n')[0] ?? '';
  return first.split(/\s+/).filter((word) => word.startsWith('--'));
}

function runCli(args: readonly string[], env: Record<string, string>, out: string): ChildProcess {
  return spawn(process.execPath, [...shebangFlags(CLI), '--import', PROBE, CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', BENCH_EVENT_LOOP_OUT: out, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

async function measureRun(standin: Standin, days: number, mode: 'backfill' | 'daemon'): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), 'tm-bench-loop-'));
  const out = join(dir, 'loop.json');
  const env = { THREAT_MIRROR_API_URL: standin.url, THREAT_MIRROR_DB: join(dir, 'mirror.db'), THREAT_MIRROR_ORG: 'bench', THREAT_MIRROR_API_KEY: KEY, THREAT_MIRROR_NOW: NOW };
  const started = performance.now();
  const child =
    mode === 'backfill'
      ? runCli(['--backfill', '--from', addDays(TODAY, -(days - 1))], env, out)
      : runCli([], { ...env, THREAT_MIRROR_INITIAL_DAYS: String(days), THREAT_MIRROR_HTTP_PORT: '0', THREAT_MIRROR_SCHEDULE: '0 0 1 1 *' }, out);
  let stdout = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const probes = mode === 'daemon' ? await probeUntilSynced(() => stdout, child) : [];
  const code = await exited;
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`the CLI exited ${code}`);
  const loop = JSON.parse(readFileSync(out, 'utf8')) as LoopDelay;
  rmSync(dir, { recursive: true, force: true });
  return { seconds, loop, probes };
}

/** Probes /healthz every 100 ms (healthz-prober.ts) from the moment the daemon serves until its first run ends, then stops it. */
async function probeUntilSynced(stdout: () => string, daemon: ChildProcess): Promise<number[]> {
  const logs = (): Array<Record<string, unknown>> =>
    stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  let port: number | undefined;
  while (port === undefined) {
    port = logs().find((line) => line.msg === SERVING_LOG_MESSAGE)?.port as number | undefined;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const prober = spawn(process.execPath, [PROBER, String(port)], { stdio: ['pipe', 'pipe', 'inherit'] });
  let answer = '';
  prober.stdout?.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
  const proberExited = new Promise((resolve) => prober.on('close', resolve));
  while (!logs().some((line) => line.stream === 'threats' && typeof line.status === 'string')) await new Promise((resolve) => setTimeout(resolve, 50));
  prober.stdin?.end();
  await proberExited;
  daemon.kill('SIGTERM');
  return JSON.parse(answer) as number[];
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
}

const SCENARIOS = [
  { name: '200k threats / 100 days / 0 ms', count: 200_000, days: 100 },
  { name: '1M threats / 365 days / 0 ms', count: 1_000_000, days: 365 },
].filter((scenario) => values.scenario === undefined || scenario.name.startsWith(values.scenario));

console.log(`CLI ${CLI}, ${RUNS} run(s) each, load average before: ${loadavg().map((load) => load.toFixed(2)).join(' ')}\n`);
console.log('| workload | run | wall s | event-loop delay p50 / p99 / max ms | /healthz probes | /healthz p50 / p99 / max ms | load after |');
console.log('|---|---|---:|---|---:|---|---|');
for (const scenario of SCENARIOS) {
  const from = addDays(TODAY, -(scenario.days - 1));
  const standin = await startStandin({
    threats: generateThreats({ seed: 99, organizations: ['bench'], count: scenario.count, fromDay: from, toDay: TODAY, hostile: true }),
    keys: { organizationKeys: { [KEY]: 'bench' }, userKeys: {} },
    now: () => new Date(NOW),
  });
  try {
    for (let run = 0; run < RUNS; run += 1) {
      for (const mode of ['backfill', 'daemon'] as const) {
        const { seconds, loop, probes } = await measureRun(standin, scenario.days, mode);
        const healthz = probes.length === 0 ? '' : `${percentile(probes, 0.5).toFixed(1)} / ${percentile(probes, 0.99).toFixed(1)} / ${Math.max(...probes).toFixed(1)}`;
        const what = mode === 'backfill' ? '`--backfill`' : "daemon's first sync";
        console.log(`| ${scenario.name} | ${what} | ${seconds.toFixed(1)} | ${loop.p50} / ${loop.p99} / ${loop.max} | ${probes.length || ''} | ${healthz} | ${loadavg()[0]?.toFixed(2)} |`);
      }
    }
  } finally {
    await standin.close();
  }
}
