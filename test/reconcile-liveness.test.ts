// Reconciliation always progresses (issue 40, case 1): a window whose walk spends the run's whole
// request budget has its removal checks carried over to the next run, and is never walked again for
// them; overdue_days falls to 0 within the bound docs/reconciliation.md states. The compiled CLI
// against the stand-in, into a real SQLite file.
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import type { RequestRecord } from '../src/standin/index.js';
import { runCli } from './support/cli.js';
import { withDb } from './support/mirror-db.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath } from './support/temp.js';
import { currentThreats, listed, removedIds, threatsOfDay } from './support/walk-data.js';

const NOW = '2026-11-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
/** Eight days later: every day the backfill walked is due (THREAT_MIRROR_RECONCILE_DAYS 7). */
const LATER = '2026-11-23T12:00:00.000Z';
const KEY = 'acme-key-40-liveness';
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_RETRY_MIN_MS: '5', THREAT_MIRROR_RETRY_MAX_MS: '50', LOG_LEVEL: 'info' });

function overdueDays(dbPath: string): number {
  return withDb(dbPath, (db) => db.prepare("SELECT overdue_days FROM sync_status WHERE organization = 'acme'").pluck().get() as number);
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
    const heavyWalks = walksOf(service.stats.requests).filter((range) => {
      const [start, end] = range.split('..') as [string, string];
      return start <= heavyDay && heavyDay <= end;
    });
    expect(heavyWalks).toHaveLength(1);
  });
});
