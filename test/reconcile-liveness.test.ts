// Reconciliation always progresses (issue 40, case 1): a window whose walk spends the run's whole
// request budget has its removal checks carried over to the next run, and is never walked again for
// them; overdue_days falls to 0 within the bound docs/reconciliation.md states, whatever the day
// sizes, the budget (1 to 30) and the unblocks and moves meanwhile (a property test, fast-check,
// fixed seed: LIVENESS_SEED=n LIVENESS_CASES=n run others). The compiled CLI against the stand-in,
// into a real SQLite file.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import type { RequestRecord, Standin, StandinThreat } from '../src/standin/index.js';
import { backfilledHalves } from './support/backfilled-halves.js';
import { runCli } from './support/cli.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath } from './support/temp.js';
import { carriedWindows, currentThreats, listed, overdueDays, removedIds, threatsOfDay } from './support/walk-data.js';

const NOW = '2026-11-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
/** A backfill this much later walks its days after the first one's: they are due after them. */
const AN_HOUR_LATER = new Date(Date.parse(NOW) + 3_600_000).toISOString();
/** Eight days later: every day the backfill walked is due (THREAT_MIRROR_RECONCILE_DAYS 7). */
const LATER = '2026-11-23T12:00:00.000Z';
const KEY = 'acme-key-40-liveness';
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_RETRY_MIN_MS: '5', THREAT_MIRROR_RETRY_MAX_MS: '50', LOG_LEVEL: 'info' });

/** Whether two `start..end` ranges of days share a day. */
function overlap(a: string, b: string): boolean {
  const [aStart, aEnd] = a.split('..') as [string, string];
  const [bStart, bEnd] = b.split('..') as [string, string];
  return aStart <= bEnd && bStart <= aEnd;
}

/** First pages a walk (not a check) asked for, by window. */
function walksOf(requests: readonly RequestRecord[]): string[] {
  return requests
    .map((request) => request.body as { startDate?: string; endDate?: string; next_page?: string; query?: string; per_page?: number })
    .filter((body) => body.query === undefined && body.next_page === undefined && body.per_page === 100)
    .map((body) => `${body.startDate}..${body.endDate}`);
}

describe('reconciliation at a budget its walks fill', { timeout: 180_000 }, () => {
  it('carries the removal checks of a window that spent the whole budget to the next run, and never walks it again for them', async () => {
    // 37 days: one of 210 threats (3 pages: the whole budget of 3), the others 20 each.
    const first = addDays(TODAY, -37);
    const heavyDay = addDays(first, 20);
    const threats = Array.from({ length: 37 }, (_, index) => {
      const day = addDays(first, index);
      return threatsOfDay(day, 100_000 + index * 1000, day === heavyDay ? 210 : 20);
    }).flat();
    const service = await serveThreats(KEY, NOW, threats);
    const dbPath = tempDbPath();
    expect((await runCli(['--backfill', '--from', first], env(service, dbPath))).code).toBe(0);

    // Two unblocked on the heavy day, ten more on light days.
    const heavy = threats.filter((threat) => threat.blockedAt.startsWith(heavyDay));
    const light = threats.filter((threat) => !threat.blockedAt.startsWith(heavyDay));
    const unblocked = [heavy[17], heavy[150], ...Array.from({ length: 10 }, (_, index) => light[index * 67 + 3])].map((threat) => threat?.id as number);
    service.removeThreats(unblocked);

    service.stats.reset();
    const budget = { THREAT_MIRROR_NOW: LATER, THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '3' };
    const overdue: number[] = [];
    // The bound of docs/reconciliation.md: 2⌈(P + C)/B⌉ + 2 runs, P ≤ 36 + 3 pages, C = 12 checks.
    const bound = 2 * Math.ceil((36 + 3 + 12) / 3) + 2;
    for (let run = 0; run < bound && overdue.at(-1) !== 0; run += 1) {
      const result = await runCli(['--once'], env(service, dbPath, budget));
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      overdue.push(overdueDays(dbPath));
    }
    expect(overdue.at(-1), `overdue days run after run: ${overdue.join(', ')}`).toBe(0);
    expect(removedIds(dbPath)).toEqual([...unblocked].sort((a, b) => a - b));
    expect(currentThreats(dbPath)).toEqual(listed(service, KEY));
    // The heavy day's window was walked once: its checks went on without a second walk of it.
    const heavyWalks = walksOf(service.stats.requests).filter((range) => overlap(range, `${heavyDay}..${heavyDay}`));
    expect(heavyWalks).toHaveLength(1);
  });

  it('walks no day of a window whose checks were carried over while they wait, however much of the budget its plan leaves', async () => {
    // Ten days of 20, the last five walked longer ago: a run of budget 1 walks them and carries their
    // two checks; a run of budget 5 settles the checks (2), walks the first five days (1) and has 2
    // requests left, which must not go to the days whose checks were just settled.
    const { service, dbPath, threats, first, fifth, sixth, tenth } = await backfilledHalves(KEY, NOW, env);
    const unblocked = threats.filter((threat) => threat.blockedAt >= sixth).filter((_, index) => index % 50 === 7).map((threat) => threat.id);
    expect(unblocked).toHaveLength(2);
    service.removeThreats(unblocked);

    const run = async (budget: number): Promise<readonly RequestRecord[]> => {
      service.stats.reset();
      const result = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_NOW: LATER, THREAT_MIRROR_RECONCILE_MAX_REQUESTS: String(budget) }));
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      return [...service.stats.requests];
    };
    const overlapsLastFive = (range: string): boolean => overlap(range, `${sixth}..${tenth}`);
    expect(walksOf(await run(1)).filter(overlapsLastFive)).toEqual([`${sixth}..${tenth}`]);
    const second = await run(5);
    expect(walksOf(second).filter(overlapsLastFive)).toEqual([]);
    expect(walksOf(second)).toContain(`${first}..${fifth}`);
    expect(removedIds(dbPath)).toEqual([...unblocked].sort((a, b) => a - b));
  });
});

const SEED = Number(process.env.LIVENESS_SEED ?? 4);
const CASES = Number(process.env.LIVENESS_CASES ?? 3);

/** A change of the service during the cycle: before run `beforeRun`, or while its first walk page is served (`duringWalk`). */
interface Change {
  readonly kind: 'unblock' | 'move';
  readonly beforeRun: number;
  readonly duringWalk: boolean;
  /** Which listed threat (an index into the list, modulo its length), and for a move, which day (modulo the days). */
  readonly pick: number;
  readonly toDay: number;
}

interface LivenessCase {
  readonly budget: number;
  /** Threats on each mirrored day. */
  readonly days: readonly number[];
  /**
   * Where the backfill is split (modulo the days; 0: one backfill): the days from there on are
   * walked first, the others an hour later, so the most overdue days are not the oldest ones.
   */
  readonly split: number;
  readonly changes: readonly Change[];
}

const MAX_CHANGES = 6;
/**
 * Budgets from 1 to 30, two cases in three at most 8: a budget above a case's pages walks every day
 * in the first run, and the property is about the runs after it (the share is checked below).
 */
const budgets = fc.oneof({ arbitrary: fc.integer({ min: 1, max: 8 }), weight: 2 }, { arbitrary: fc.integer({ min: 9, max: 30 }), weight: 1 });
const livenessCase: fc.Arbitrary<LivenessCase> = budgets.chain((budget) =>
  fc.record({
    budget: fc.constant(budget),
    // Every day fits a run's budget, moves into it included: a larger one is never reconciled (documented).
    days: fc.array(fc.integer({ min: 0, max: Math.min(100 * budget - MAX_CHANGES, 260) }), { minLength: 3, maxLength: 12 }),
    split: fc.nat(),
    changes: fc.array(
      fc.record({ kind: fc.constantFrom('unblock' as const, 'move' as const), beforeRun: fc.integer({ min: 0, max: 3 }), duringWalk: fc.boolean(), pick: fc.nat(), toDay: fc.nat() }),
      { maxLength: MAX_CHANGES },
    ),
  }),
);

/** The change, applied to what the service lists now. */
function apply(service: Standin, change: Change, days: readonly string[]): void {
  const listedNow = service.threatsVisibleTo(KEY);
  const threat = listedNow[change.pick % Math.max(1, listedNow.length)];
  if (!threat) return;
  if (change.kind === 'unblock') return service.removeThreats([threat.id]);
  const day = days[change.toDay % days.length] as string;
  service.updateThreat(threat.id, { blockedAt: `${day}T23:${String(change.pick % 60).padStart(2, '0')}:00.000Z` });
}

/**
 * The bound of docs/reconciliation.md: from every mirrored day due, overdue_days is 0 within
 * 2⌈(P + C)/B⌉ + 2 runs, and each change meanwhile adds at most one: P the pages of the days (a day
 * costs at least one), C the removal checks (at most one per change), B the budget.
 */
function boundOf({ budget, days, changes }: LivenessCase): number {
  const pages = days.reduce((sum, records) => sum + Math.max(1, Math.ceil((records + changes.length) / 100)), 0);
  return 2 * Math.ceil((pages + changes.length) / budget) + 2 + changes.length;
}

/** Cases whose first run left days due: the ones that test progress across runs. */
let casesLeftDue = 0;

async function overdueReachesZero(testCase: LivenessCase): Promise<void> {
  const first = addDays(TODAY, -testCase.days.length - 1);
  const days = testCase.days.map((_, index) => addDays(first, index));
  const threats: StandinThreat[] = testCase.days.flatMap((records, index) => threatsOfDay(days[index] as string, 100_000 + index * 1000, records));
  const service = await serveThreats(KEY, NOW, threats);
  const dbPath = tempDbPath();
  const split = testCase.split % days.length;
  expect((await runCli(['--backfill', '--from', days[split] as string], env(service, dbPath))).code).toBe(0);
  if (split > 0) {
    expect((await runCli(['--backfill', '--from', first, '--to', days[split - 1] as string], env(service, dbPath, { THREAT_MIRROR_NOW: AN_HOUR_LATER }))).code).toBe(0);
  }
  const bound = boundOf(testCase);
  const overdue: number[] = [];
  const budget = { THREAT_MIRROR_NOW: LATER, THREAT_MIRROR_RECONCILE_MAX_REQUESTS: String(testCase.budget) };
  for (let run = 0; run < bound && (overdue.at(-1) !== 0 || run <= 3); run += 1) {
    for (const change of testCase.changes.filter((candidate) => candidate.beforeRun === run)) {
      if (change.duringWalk) service.onListRequest({ match: { withQuery: false }, change: () => apply(service, change, days) });
      else apply(service, change, days);
    }
    const carried = carriedWindows(dbPath);
    const sent = service.stats.requests.length;
    const result = await runCli(['--once'], env(service, dbPath, budget));
    expect(result.code, result.stderr).toBe(0);
    overdue.push(overdueDays(dbPath));
    // A window whose checks were carried over is settled by them, never walked again for them.
    const walkedAgain = walksOf(service.stats.requests.slice(sent)).filter((range) => carried.some((window) => overlap(range, window)));
    expect(walkedAgain, `run ${run}: walks over the windows whose checks were carried (${carried.join(', ')})`).toEqual([]);
  }
  // The branch the property is about: a budget that leaves days due after the first run.
  if ((overdue[0] ?? 0) > 0) casesLeftDue += 1;
  const seen = `budget ${testCase.budget}, days ${testCase.days.join(' ')} split at ${split}, ${testCase.changes.length} changes; overdue run after run: ${overdue.join(', ')} (bound ${bound})`;
  expect(overdue.at(-1), seen).toBe(0);
  // A last full pass (nothing due, nothing changes): the mirror holds what the service lists.
  expect((await runCli(['--once'], env(service, dbPath, { ...budget, THREAT_MIRROR_RECONCILE_DAYS: '0', THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '100000' }))).code).toBe(0);
  expect(currentThreats(dbPath), seen).toEqual(listed(service, KEY));
}

describe(`reconciliation always progresses (fast-check, seed ${SEED}, ${CASES} cases)`, { timeout: 120_000 + CASES * 60_000 }, () => {
  it('brings overdue_days to 0 within the stated bound for any day sizes, budget from 1 to 30, and unblocks and moves during the cycle', async () => {
    await fc.assert(fc.asyncProperty(livenessCase, overdueReachesZero), { seed: SEED, numRuns: CASES, endOnFailure: true });
    // At least a third of the cases must have needed more than one run, or the property checked little.
    expect(casesLeftDue, `${casesLeftDue} of ${CASES} cases left days due after their first run`).toBeGreaterThanOrEqual(Math.ceil(CASES / 3));
  });
});
