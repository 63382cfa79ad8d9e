// Progress of long runs: a redrawn line on a terminal (judged under a real pseudo-terminal), progress
// log records without one, the same numbers in `status` beside a running backfill, and the gauge.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { addDays, dayOf } from '../src/lib/days.js';
import { generateThreats, type Standin } from '../src/standin/index.js';
import { CLI_PATH, runCli, servingPort, startCli } from './support/cli.js';
import { afterThisTest } from './support/cleanup.js';
import { promtoolCheckMetrics, skipWithout } from './support/judges.js';
import { type Env, mirrorEnvFor, organizationKey, startTestStandin } from './support/service.js';
import { tempDbPath } from './support/temp.js';

const KEY = 'acme-progress-key';
// The real clock: `status` (another process) measures a running run's rate against it.
const TODAY = dayOf(new Date());
const FROM = addDays(TODAY, -59);

/** 3,000 threats over 60 days, each request answered after `latencyMs`: a backfill of ~35 requests in 4 windows. */
async function slowService(latencyMs: number, count = 3000): Promise<Standin> {
  const threats = generateThreats({ seed: 71, organizations: ['acme'], count, fromDay: FROM, toDay: TODAY });
  return startTestStandin({ threats, keys: organizationKey(KEY), latencyMs });
}

// One request at a time: the windows complete one after another, so the ETA appears early. The real
// clock (null), as above.
const mirrorEnv = mirrorEnvFor(KEY, null, { THREAT_MIRROR_CONCURRENCY: '1' });

/** Runs the CLI with stdin, stdout and stderr on a pseudo-terminal (util-linux `script`); resolves to all it printed. */
function runOnTerminal(args: readonly string[], env: Env): Promise<{ code: number | null; output: string }> {
  const command = [CLI_PATH, ...args].map((word) => `'${word}'`).join(' ');
  // script's own environment is the CLI's: no NO_COLOR or TERM from the shell that runs the tests.
  const child = spawn('script', ['-qfec', command, '/dev/null'], { env: { PATH: process.env.PATH ?? '', TERM: 'xterm', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  afterThisTest('processes', () => child.kill('SIGKILL'));
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output })));
}

/** The progress states drawn: each text between carriage returns that a redraw wrote. */
function drawnStates(output: string): string[] {
  return output
    .split(/\r|\n/)
    .map((text) => text.replaceAll('\x1b[K', ''))
    .filter((text) => /^backfill \d+%: /.test(text));
}

const CONTROL = /[\x00-\x09\x0b-\x1f\x7f]/;

describe('progress', () => {
  it.skipIf(skipWithout(['script']))('draws a progress line with an ETA on a terminal, and ends with a summary', async () => {
    const service = await slowService(60);
    const dbPath = tempDbPath();
    const { code, output } = await runOnTerminal(['--backfill', '--from', FROM, '--to', TODAY], mirrorEnv(service, dbPath));
    expect(code, output).toBe(0);
    const states = drawnStates(output);
    expect(new Set(states).size, output).toBeGreaterThanOrEqual(3);
    // Each state is drawn over the last: a carriage return before it, the rest of the old line erased after it.
    expect(output).toMatch(/\rbackfill \d+%: \d+\/60 days, 0\/1 orgs done, [\d,]+ threats, [\d.]+ req\/s(, ETA \d+s)?\x1b\[K/);
    const withEta = states.filter((state) => /, ETA (\d+s|\d+m\d\ds)$/.test(state));
    expect(withEta.length, states.join('\n')).toBeGreaterThanOrEqual(1);
    // The percentage never goes back.
    const percentages = states.map((state) => Number(/^backfill (\d+)%/.exec(state)?.[1]));
    expect(percentages).toEqual([...percentages].sort((a, b) => a - b));
    expect(output).toMatch(/threat-mirror: backfill finished in \d+s: 1\/1 organizations, 60\/60 days, 3,000 threats, \d+ requests \([\d.]+\/s\)\r?\n/);
  });

  it.skipIf(skipWithout(['script']))('draws no line on a terminal when NO_COLOR or TERM=dumb asks for plain output: progress records instead', async () => {
    const service = await slowService(30, 1500);
    for (const plain of [{ NO_COLOR: '1' }, { TERM: 'dumb' }] as Env[]) {
      const dbPath = tempDbPath();
      const { code, output } = await runOnTerminal(['--backfill', '--from', FROM, '--to', TODAY], mirrorEnv(service, dbPath, { ...plain, THREAT_MIRROR_PROGRESS_SECONDS: '0.2' }));
      expect(code, output).toBe(0);
      expect(output, JSON.stringify(plain)).not.toContain('\x1b[K');
      expect(drawnStates(output)).toEqual([]);
      expect(output).not.toContain('backfill finished');
      expect(output).toContain('"msg":"progress"');
    }
  });

  it('without a terminal: no control characters, and a progress record at each interval whose numbers never decrease', async () => {
    const service = await slowService(50);
    const dbPath = tempDbPath();
    const result = await runCli(['--backfill', '--from', FROM, '--to', TODAY], mirrorEnv(service, dbPath, { THREAT_MIRROR_PROGRESS_SECONDS: '0.3' }));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    expect(CONTROL.test(result.stdout.replaceAll('\n', ''))).toBe(false);
    const records = result.logs.filter((line) => line.msg === 'progress');
    const periodic = records.filter((line) => line.done === undefined);
    expect(periodic.length, JSON.stringify(records)).toBeGreaterThanOrEqual(3);
    const times = periodic.map((line) => Date.parse(line.time as string));
    const gaps = times.slice(1).map((time, index) => time - (times[index] as number));
    // Never more often than asked; on time on average (a loaded machine delays a timer, never hastens it).
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(290);
    expect(gaps.reduce((sum, gap) => sum + gap, 0) / gaps.length).toBeLessThan(900);
    for (const field of ['daysDone', 'threats', 'requests', 'percent', 'organizationsDone'] as const) {
      const values = records.map((line) => line[field] as number);
      expect(values, field).toEqual([...values].sort((a, b) => a - b));
    }
    expect(periodic[0]).toMatchObject({ organizationsTotal: 1, daysTotal: 60, runs: [{ organization: 'acme', mode: 'backfill', daysTotal: 60 }] });
    expect(records.at(-1)).toMatchObject({ done: true, organizationsDone: 1, daysDone: 60, percent: 100, threats: 3000 });
    expect(periodic.some((line) => typeof line.etaSeconds === 'number')).toBe(true);
  });

  it('status beside a running backfill shows its percentage, rate and ETA, read from the file', async () => {
    const service = await slowService(120);
    const dbPath = tempDbPath();
    const backfill = startCli(['--backfill', '--from', FROM, '--to', TODAY], mirrorEnv(service, dbPath));
    let plan: Record<string, unknown> | undefined;
    // Polls until a window of the run has completed (the first pace, so the first ETA).
    while (backfill.running) {
      const status = await runCli(['status', '--json'], { THREAT_MIRROR_DB: dbPath });
      // 2 until the writer has made the file; then 3 (a backfill is no incremental sync: nothing to vouch for yet).
      if (status.code === 0 || status.code === 3) {
        const [organization] = (JSON.parse(status.stdout) as { organizations: Array<{ openPlans: Array<Record<string, unknown>> }> }).organizations;
        plan = organization?.openPlans[0];
        if ((plan?.progress as { etaSeconds?: unknown } | undefined)?.etaSeconds != null) break;
      }
    }
    expect(backfill.running, 'the backfill ended before status saw a window of it complete').toBe(true);
    expect(plan).toMatchObject({ mode: 'backfill', rangeStart: FROM, rangeEnd: TODAY, progress: { state: 'running', mode: 'backfill', daysTotal: 60 } });
    const progress = plan?.progress as { daysDone: number; percent: number; etaSeconds: number; requestsPerSecond: number; threats: number };
    expect(progress.daysDone).toBeGreaterThan(0);
    expect(progress.percent).toBeGreaterThan(0);
    expect(progress.percent).toBeLessThan(100);
    expect(progress.etaSeconds).toBeGreaterThan(0);
    expect(progress.requestsPerSecond).toBeGreaterThan(0);
    expect(progress.threats).toBeGreaterThan(0);
    const text = await runCli(['status'], { THREAT_MIRROR_DB: dbPath });
    expect(text.stdout).toMatch(new RegExp(`running backfill ${FROM}\\.\\.${TODAY}: \\d+/60 days \\(\\d+%\\), [\\d,]+ threats, [\\d.]+ requests/s(, ETA \\d+s)?; \\d+ of \\d+ windows open`));
    backfill.kill('SIGTERM');
    expect((await backfill.exited).code).toBe(0);
    // Stopped mid-way: the plan is unfinished, with its days done and no rate.
    const after = JSON.parse((await runCli(['status', '--json'], { THREAT_MIRROR_DB: dbPath })).stdout) as { organizations: Array<{ openPlans: Array<{ progress: Record<string, unknown> }> }> };
    expect(after.organizations[0]?.openPlans[0]?.progress).toMatchObject({ state: 'unfinished', requestsPerSecond: null, etaSeconds: null });
  });

  it.skipIf(skipWithout(['promtool']))("exposes the running run's progress in [0, 1] per organization on /metrics, as promtool accepts it", async () => {
    const service = await slowService(60);
    const dbPath = tempDbPath();
    const daemon = startCli([], mirrorEnv(service, dbPath, { THREAT_MIRROR_INITIAL_DAYS: '60', THREAT_MIRROR_HTTP_PORT: '0', THREAT_MIRROR_SCHEDULE: '0 0 1 1 *' }));
    const port = await servingPort(daemon);
    const seen: number[] = [];
    let metrics = '';
    while (daemon.running && !daemon.logs.some((line) => line.status === 'succeeded')) {
      metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      const value = /^threat_mirror_run_progress_ratio\{organization="acme",mode="incremental"\} (\S+)$/m.exec(metrics)?.[1];
      if (value !== undefined) seen.push(Number(value));
      if (seen.some((fraction) => fraction > 0 && fraction < 1)) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(seen.length).toBeGreaterThan(0);
    for (const fraction of seen) expect(fraction >= 0 && fraction <= 1).toBe(true);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(promtoolCheckMetrics(metrics)).toEqual({ ok: true, output: '' });
    await daemon.waitForLog((line) => line.status === 'succeeded');
    // Once the run has ended, no progress series of its mode is left behind.
    const idle = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(idle).not.toMatch(/^threat_mirror_run_progress_ratio\{organization="acme",mode="incremental"\}/m);
  });
});
