import { describe, expect, it } from 'vitest';
import { RequestBudgets } from '../../src/api/request-budget.js';
import { loadConfig } from '../../src/config.js';
import type { LedgerDay } from '../../src/db/read/ledger-reads.js';
import { addDays } from '../../src/lib/days.js';
import { ConfigError } from '../../src/lib/errors.js';
import { planReconciliation } from '../../src/sync/reconcile-planner.js';
import { RequestAllowance, RequestAllowanceSpent } from '../../src/sync/request-allowance.js';

const FIRST = '2026-01-01';

/** Days from FIRST with these records, walked in the order given by `walkOrder` (default: by day). */
function ledgerDays(records: readonly number[], walkOrder?: readonly number[]): LedgerDay[] {
  const days = records.map((count, index) => ({ day: addDays(FIRST, index), records: count, completedAt: '' }));
  const order = walkOrder ?? days.map((_, index) => index);
  return order.map((index, rank) => ({ ...(days[index] as LedgerDay), completedAt: `2026-02-01T00:00:${String(rank).padStart(2, '0')}.000Z` }));
}

describe('planReconciliation', () => {
  it('packs quiet days into one window: a day with 3 threats costs no request of its own', () => {
    const plan = planReconciliation(ledgerDays([3, 10, 0, 7, 12, 5, 9, 4, 1, 6]), 20);
    expect(plan.windows).toEqual([{ start: FIRST, end: addDays(FIRST, 9), estimatedRequests: 1 }]);
  });

  it('stays within the allowance, and leaves the rest for the next run', () => {
    const plan = planReconciliation(ledgerDays([150, 150, 150, 150, 150]), 5);
    expect(plan.windows).toEqual([{ start: FIRST, end: addDays(FIRST, 2), estimatedRequests: 5 }]);
  });

  it('never spends a request on a day while one walked longer ago waits', () => {
    // Day 4 was walked first, day 0 next; the days beside day 4 were walked last.
    const plan = planReconciliation(ledgerDays([100, 100, 100, 100, 100, 100], [4, 0, 1, 2, 3, 5]), 2);
    expect(plan.windows.map((window) => [window.start, window.end])).toEqual([
      [FIRST, FIRST],
      [addDays(FIRST, 4), addDays(FIRST, 4)],
    ]);
  });

  it('sets aside a day larger than a whole run may spend, and plans the others', () => {
    const plan = planReconciliation(ledgerDays([50, 5000, 50]), 20);
    expect(plan.tooLarge.map((day) => day.day)).toEqual([addDays(FIRST, 1)]);
    expect(plan.windows.map((window) => [window.start, window.end])).toEqual([
      [FIRST, FIRST],
      [addDays(FIRST, 2), addDays(FIRST, 2)],
    ]);
  });

  it('plans within what the checks carried over leave, and sets aside as too large only a day beyond a whole run', () => {
    const plan = planReconciliation(ledgerDays([150, 150, 150]), 4, 2);
    expect(plan.windows).toEqual([{ start: FIRST, end: FIRST, estimatedRequests: 2 }]);
    expect(plan.tooLarge).toEqual([]);
    expect(planReconciliation(ledgerDays([150]), 4, 0)).toEqual({ windows: [], tooLarge: [] });
  });

  it('keeps windows near the incremental walk\'s size, so a run of dense days is cut', () => {
    const plan = planReconciliation(ledgerDays(Array.from({ length: 10 }, () => 900)), 1000);
    expect(plan.windows.length).toBeGreaterThan(3);
    expect(plan.windows.every((window) => window.estimatedRequests <= 20)).toBe(true);
    expect(plan.windows.reduce((sum, window) => sum + window.estimatedRequests, 0)).toBe(90);
  });
});

describe('RequestAllowance', () => {
  it('lets through as many requests as allowed, then refuses before the next one starts', async () => {
    const shared = new RequestBudgets({ concurrency: 4 });
    const allowance = new RequestAllowance(2);
    const budget = allowance.budgets(shared).forKey('k');
    const first = await budget.acquire();
    const second = await budget.acquire();
    await expect(budget.acquire()).rejects.toBeInstanceOf(RequestAllowanceSpent);
    // The key's own budget is the shared one, and a refused request gave its slot back.
    expect(shared.forKey('k').inFlight).toBe(2);
    first();
    second();
    expect(shared.forKey('k').inFlight).toBe(0);
    expect(allowance.used).toBe(2);
  });
});

describe('reconciliation settings', () => {
  const base = { THREAT_MIRROR_API_URL: 'http://127.0.0.1:9999', THREAT_MIRROR_API_KEY: 'k' };
  it('default to a week and 20 requests a run; 0 is allowed for both', () => {
    expect(loadConfig(base)).toMatchObject({ reconcileDays: 7, reconcileMaxRequests: 20 });
    expect(loadConfig({ ...base, THREAT_MIRROR_RECONCILE_DAYS: '0', THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '0' })).toMatchObject({ reconcileDays: 0, reconcileMaxRequests: 0 });
  });
  it('name the variable that is wrong', () => {
    expect(() => loadConfig({ ...base, THREAT_MIRROR_RECONCILE_DAYS: '-1' })).toThrow(new ConfigError('THREAT_MIRROR_RECONCILE_DAYS: "-1" must be at least 0'));
    expect(() => loadConfig({ ...base, THREAT_MIRROR_RECONCILE_MAX_REQUESTS: 'lots' })).toThrow(/^THREAT_MIRROR_RECONCILE_MAX_REQUESTS: "lots" must be a whole number/);
  });
});
