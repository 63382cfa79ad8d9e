// Rolling reconciliation (docs/reconciliation.md), as a user runs it: the compiled CLI against the
// stand-in, into a real SQLite file, after a backfill of 60 days.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { checkReadiness } from '../src/daemon/readiness.js';
import { generateThreats, type Standin, type StandinThreat } from '../src/standin/index.js';
import { runCli, startCli } from './support/cli.js';
import { scalar, withDb } from './support/mirror-db.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath, tempDir } from './support/temp.js';

// Noon, so "today" cannot flip between the test and the CLI.
const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
/** Eight days later: every day the backfill walked is then older than the default 7 days. */
const LATER = '2026-03-23T12:00:00.000Z';
const FIRST_DAY = addDays(TODAY, -59);
const KEY = 'acme-key-5f2b9c';

async function backfilled(seed: number): Promise<{ service: Standin; dbPath: string }> {
  const service = await serveThreats(KEY, NOW, generateThreats({ seed, organizations: ['acme'], count: 3000, fromDay: FIRST_DAY, toDay: TODAY }));
  const dbPath = tempDbPath();
  const result = await runCli(['--backfill', '--from', FIRST_DAY], env(service, dbPath));
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return { service, dbPath };
}

const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_RETRY_MIN_MS: '5', THREAT_MIRROR_RETRY_MAX_MS: '50', LOG_LEVEL: 'info' });

/** Threats of the service on days older than the re-scan range (today and 2 closed days). */
function oldThreats(service: Standin, from: string, to: string): StandinThreat[] {
  return service.threatsVisibleTo(KEY).filter((threat) => threat.blockedAt.slice(0, 10) >= from && threat.blockedAt.slice(0, 10) <= to);
}

/** One threat on each of `count` different days between two days, spread out. */
function onDistinctDays(threats: readonly StandinThreat[], count: number): StandinThreat[] {
  const byDay = new Map<string, StandinThreat>();
  for (const threat of threats) if (!byDay.has(threat.blockedAt.slice(0, 10))) byDay.set(threat.blockedAt.slice(0, 10), threat);
  const days = [...byDay.values()];
  const step = Math.max(1, Math.floor(days.length / count));
  return days.filter((_, index) => index % step === 0).slice(0, count);
}

function removedIds(dbPath: string): number[] {
  return withDb(dbPath, (db) => db.prepare("SELECT threat_id FROM organization_threats WHERE organization = 'acme' AND removed_at IS NOT NULL ORDER BY threat_id").pluck().all() as number[]);
}

function currentIds(dbPath: string): number[] {
  return withDb(dbPath, (db) => db.prepare("SELECT id FROM current_threats WHERE organization = 'acme' ORDER BY id").pluck().all() as number[]);
}

function status(dbPath: string): { overdue_days: number; oldest_overdue_day: string | null; last_full_reconcile_at: string | null; last_run_status: string } {
  return withDb(dbPath, (db) => db.prepare("SELECT * FROM sync_status WHERE organization = 'acme'").get()) as ReturnType<typeof status>;
}

function reconcileRuns(dbPath: string): Array<{ id: number; status: string; pages: number; threats_removed: number; threats_updated: number }> {
  return withDb(dbPath, (db) => db.prepare("SELECT * FROM sync_runs WHERE mode = 'reconcile' ORDER BY id").all()) as ReturnType<typeof reconcileRuns>;
}

/** The days each run of this file's ledger walked to the end, with when they were walked before. */
function ledger(dbPath: string): Map<string, { completedAt: string; runId: number }> {
  const rows = withDb(dbPath, (db) => db.prepare("SELECT day, completed_at AS completedAt, run_id AS runId FROM sync_windows WHERE organization = 'acme'").all()) as Array<{
    day: string;
    completedAt: string;
    runId: number;
  }>;
  return new Map(rows.map(({ day, ...rest }) => [day, rest]));
}

type Body = { startDate: string; endDate: string };

// Each test runs the CLI several times over 3,000 threats: give it room on a loaded 2-core machine.
describe('reconciliation', { timeout: 180_000 }, () => {
  it('marks threats unblocked on old days removed, restores re-blocked ones, and updates a changed one once', async () => {
    const { service, dbPath } = await backfilled(61);
    const old = oldThreats(service, FIRST_DAY, addDays(TODAY, -5));
    const victims = onDistinctDays(old, 6);
    expect(victims).toHaveLength(6);
    const changed = old.find((threat) => !victims.includes(threat) && threat.blockedAt.slice(0, 10) < addDays(TODAY, -30));
    if (!changed) throw new Error('the dataset has no threat 30 days back');
    service.removeThreats(victims.map((threat) => threat.id));
    service.updateThreat(changed.id, { content: `${changed.content}-changed` });
    const seqBefore = scalar<number>(dbPath, 'SELECT max(change_seq) FROM threats');
    const everyDay = { THREAT_MIRROR_RECONCILE_DAYS: '0', THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '1000' };

    // The incremental re-scan alone cannot see them: its days are the last two closed ones and today.
    const off = await runCli(['--once'], env(service, dbPath, { ...everyDay, THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '0' }));
    expect(off.code).toBe(0);
    expect(removedIds(dbPath)).toEqual([]);

    const first = await runCli(['--once'], env(service, dbPath, everyDay));
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(removedIds(dbPath)).toEqual(victims.map((threat) => threat.id).sort((a, b) => a - b));
    expect(currentIds(dbPath)).toEqual(service.threatsVisibleTo(KEY).map((threat) => threat.id));
    expect(scalar(dbPath, 'SELECT content FROM threats WHERE id = ?', changed.id)).toBe(`${changed.content}-changed`);
    const changedSeq = scalar<number>(dbPath, 'SELECT change_seq FROM threats WHERE id = ?', changed.id);
    expect(changedSeq).toBeGreaterThan(seqBefore);
    expect(reconcileRuns(dbPath)).toMatchObject([{ status: 'succeeded', threats_removed: 6, threats_updated: 1 }]);
    expect(status(dbPath)).toMatchObject({ overdue_days: 0, oldest_overdue_day: null, last_run_status: 'succeeded' });
    expect(status(dbPath).last_full_reconcile_at).not.toBeNull();

    // Walked again with nothing changed: the change feed does not move.
    const seqAfterFirst = scalar<number>(dbPath, 'SELECT max(change_seq) FROM threats');
    expect((await runCli(['--once'], env(service, dbPath, everyDay))).code).toBe(0);
    expect(scalar(dbPath, 'SELECT max(change_seq) FROM threats')).toBe(seqAfterFirst);
    expect(reconcileRuns(dbPath).at(-1)).toMatchObject({ status: 'succeeded', threats_removed: 0, threats_updated: 0 });

    // Blocked again: the mark goes, and the feed moves for each of them.
    service.addThreats(victims);
    expect((await runCli(['--once'], env(service, dbPath, everyDay))).code).toBe(0);
    expect(removedIds(dbPath)).toEqual([]);
    expect(currentIds(dbPath)).toEqual(service.threatsVisibleTo(KEY).map((threat) => threat.id));
    for (const victim of victims) expect(scalar<number>(dbPath, 'SELECT change_seq FROM threats WHERE id = ?', victim.id)).toBeGreaterThan(seqAfterFirst);
  });

  it('is off with THREAT_MIRROR_RECONCILE_MAX_REQUESTS=0: no request, no change, but the overdue days show', async () => {
    const { service, dbPath } = await backfilled(63);
    const victims = onDistinctDays(oldThreats(service, FIRST_DAY, addDays(TODAY, -5)), 4);
    service.removeThreats(victims.map((threat) => threat.id));
    const before = service.stats.requests.length;
    const result = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_RECONCILE_DAYS: '0', THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '0' }));
    expect(result.code).toBe(0);
    const bodies = service.stats.requests.slice(before).map((request) => request.body as Body);
    expect(bodies.length).toBeGreaterThan(0);
    // Only the incremental range: the last two closed days and today.
    for (const body of bodies) expect(body.startDate >= addDays(TODAY, -2)).toBe(true);
    expect(removedIds(dbPath)).toEqual([]);
    expect(reconcileRuns(dbPath)).toEqual([]);
    expect(scalar(dbPath, 'SELECT count(*) FROM reconcile_state')).toBe(0);
    // With 0 days, every day the last run did not walk is overdue.
    expect(status(dbPath)).toMatchObject({ overdue_days: 57, oldest_overdue_day: FIRST_DAY, last_full_reconcile_at: null });
  });

  it('spends at most its request budget per run, and successive runs cover the due days oldest first until none is due', async () => {
    const { service, dbPath } = await backfilled(67);
    const budget = 8;
    const walkedBefore = ledger(dbPath);
    const later = (extra: Record<string, string>) => env(service, dbPath, { THREAT_MIRROR_NOW: LATER, ...extra });

    // The same first run on a copy of the file, with reconciliation off.
    const copyPath = join(tempDir(), 'copy.db');
    copyFileSync(dbPath, copyPath);
    let mark = service.stats.requests.length;
    expect((await runCli(['--once'], { ...later({ THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '0' }), THREAT_MIRROR_DB: copyPath })).code).toBe(0);
    const withoutReconciliation = service.stats.requests.length - mark;
    // Eight days on, every day the backfill walked but today (re-scanned) is overdue.
    expect(status(copyPath)).toMatchObject({ overdue_days: 59, oldest_overdue_day: FIRST_DAY, last_full_reconcile_at: null });

    const perRun: Array<{ requests: number; days: string[] }> = [];
    for (let run = 0; run < 30; run += 1) {
      mark = service.stats.requests.length;
      const result = await runCli(['--once'], later({ THREAT_MIRROR_RECONCILE_MAX_REQUESTS: String(budget) }));
      expect(result.code).toBe(0);
      const bodies = service.stats.requests.slice(mark).map((request) => request.body as Body);
      if (run === 0) {
        expect(bodies.length - withoutReconciliation).toBeGreaterThan(0);
        expect(bodies.length - withoutReconciliation).toBeLessThanOrEqual(budget);
        // Part of the history is re-walked: the rest still shows as overdue.
        expect(status(dbPath).overdue_days).toBeGreaterThan(0);
        expect(status(dbPath).overdue_days).toBeLessThan(59);
        const oldest = status(dbPath).oldest_overdue_day ?? '';
        expect(oldest >= FIRST_DAY && oldest < TODAY).toBe(true);
      }
      // Reconciliation's requests are the ones for days before the incremental range.
      const reconciling = bodies.filter((body) => body.endDate < TODAY).length;
      const runId = reconcileRuns(dbPath).at(-1)?.id;
      const days = [...ledger(dbPath)].filter(([, row]) => row.runId === runId).map(([day]) => day);
      if (reconciling === 0) break;
      expect(reconciling).toBeLessThanOrEqual(budget);
      perRun.push({ requests: reconciling, days });
    }
    expect(status(dbPath)).toMatchObject({ overdue_days: 0, oldest_overdue_day: null });
    expect(status(dbPath).last_full_reconcile_at).not.toBeNull();

    // Every overdue day once, and no other.
    const covered = perRun.flatMap((run) => run.days).sort();
    expect(covered).toEqual(Array.from({ length: 59 }, (_, index) => addDays(FIRST_DAY, index)));
    // Oldest first: each run takes the day walked longest ago of those still due.
    const priorWalk = (day: string): string => walkedBefore.get(day)?.completedAt ?? '';
    let remaining = [...covered];
    for (const run of perRun) {
      const mostOverdue = remaining.reduce((oldest, day) => (priorWalk(day) < priorWalk(oldest) ? day : oldest));
      expect(run.days).toContain(mostOverdue);
      remaining = remaining.filter((day) => !run.days.includes(day));
    }
    // Packed: a few windows per run, not a request per day (59 days over about 30 pages).
    const total = perRun.reduce((sum, run) => sum + run.requests, 0);
    const threats = oldThreats(service, FIRST_DAY, addDays(TODAY, -1)).length;
    expect(total).toBeLessThanOrEqual(Math.ceil(threats / 100) + 2 * perRun.length);
    expect(perRun.length).toBeGreaterThan(1);
    const text = await runCli(['status'], { THREAT_MIRROR_DB: dbPath });
    expect(text.stdout).toMatch(/reconciliation {4}no day overdue; last full cycle 2026-03-23T/);
  });

  it('never marks anything removed from a walk a kill cut short, and the next run finishes the work', async () => {
    const { service, dbPath } = await backfilled(71);
    const victims = onDistinctDays(oldThreats(service, FIRST_DAY, addDays(TODAY, -5)), 12);
    service.removeThreats(victims.map((threat) => threat.id));
    // Slow pages, so the kill lands while the windows are being walked.
    service.setLatency(150);
    const settings = { THREAT_MIRROR_RECONCILE_DAYS: '0', THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '1000', THREAT_MIRROR_CONCURRENCY: '2', LOG_LEVEL: 'debug' };
    const killed = startCli(['--once'], env(service, dbPath, settings));
    const reconcilePages = (): number => killed.logs.filter((line) => line.msg === 'page committed' && line.phase === 'reconcile').length;
    await killed.waitForLog(() => reconcilePages() >= 4);
    killed.kill('SIGKILL');
    expect((await killed.exited).signal).toBe('SIGKILL');

    // A window was cut short: pages of it committed, its end never reached.
    const partial = withDb(dbPath, (db) =>
      db
        .prepare("SELECT c.window_start AS start, c.window_end AS end FROM sync_cursors c JOIN sync_plans p ON p.id = c.plan_id WHERE p.mode = 'reconcile' AND c.completed_at IS NULL AND c.pages > 0")
        .all(),
    ) as Array<{ start: string; end: string }>;
    expect(partial.length).toBeGreaterThan(0);
    const killedRun = reconcileRuns(dbPath)[0];
    const walkedByKilled = new Set([...ledger(dbPath)].filter(([, row]) => row.runId === killedRun?.id).map(([day]) => day));
    const removed = removedIds(dbPath);
    // Removed only where a window was walked to its end, and there exactly the unblocked ones.
    for (const victim of victims) {
      const day = victim.blockedAt.slice(0, 10);
      expect(removed.includes(victim.id)).toBe(walkedByKilled.has(day));
    }
    for (const window of partial) for (const victim of victims) if (victim.blockedAt.slice(0, 10) >= window.start && victim.blockedAt.slice(0, 10) <= window.end) expect(removed).not.toContain(victim.id);
    expect(removed.length).toBeLessThan(victims.length);

    service.setLatency(0);
    const resumed = await runCli(['--once'], env(service, dbPath, settings));
    expect(resumed.code).toBe(0);
    expect(removedIds(dbPath)).toEqual(victims.map((threat) => threat.id).sort((a, b) => a - b));
    expect(currentIds(dbPath)).toEqual(service.threatsVisibleTo(KEY).map((threat) => threat.id));
    expect(reconcileRuns(dbPath).map((run) => run.status)).toEqual(['interrupted', 'succeeded']);
    expect(scalar(dbPath, "SELECT count(*) FROM sync_plans WHERE mode = 'reconcile'")).toBe(0);
    expect(status(dbPath)).toMatchObject({ overdue_days: 0, oldest_overdue_day: null });
  });

  it('waits out a 429 like every request of the key; a failure exits 1 and leaves /readyz to the incremental sync', async () => {
    const { service, dbPath } = await backfilled(73);
    const victims = onDistinctDays(oldThreats(service, FIRST_DAY, addDays(TODAY, -5)), 3);
    service.removeThreats(victims.map((threat) => threat.id));
    service.setLatency(50);
    const settings = { THREAT_MIRROR_RECONCILE_DAYS: '0', THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '1000', THREAT_MIRROR_MAX_RETRIES: '1' };
    const limited = startCli(['--once'], env(service, dbPath, settings));
    await limited.waitForLog((line) => line.msg === 'reconciliation started');
    service.faults.enqueue({ kind: 'rateLimit', retryAfter: '1' }, { times: 2 });
    const done = await limited.exited;
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    expect(service.stats.requests.filter((request) => request.status === 429)).toHaveLength(2);
    expect(service.stats.earlyRequests(KEY)).toBe(0);
    expect(removedIds(dbPath)).toEqual(victims.map((threat) => threat.id).sort((a, b) => a - b));

    const failing = startCli(['--once'], env(service, dbPath, settings));
    await failing.waitForLog((line) => line.msg === 'reconciliation started');
    service.faults.enqueue({ kind: 'status', status: 500 }, { times: 1000 });
    const failed = await failing.exited;
    service.faults.clear();
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/organization "acme" failed: reconciliation: /);
    expect(reconcileRuns(dbPath).map((run) => run.status)).toEqual(['succeeded', 'failed']);
    // The incremental run succeeded: readiness and sync_status's run columns speak of it alone.
    expect(status(dbPath)).toMatchObject({ last_run_status: 'succeeded' });
    const readiness = withDb(dbPath, (db) => checkReadiness(db, ['acme'], new Date(Date.parse(NOW) + 60_000), 1200));
    expect(readiness).toMatchObject({ ready: true, reasons: [] });
  });
});
