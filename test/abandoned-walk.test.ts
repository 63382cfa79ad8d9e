// A history walk the budget cut midway wrote the pages it read; a threat on them unblocked since
// is found only when the walk reaches the window's end. When no walk will (the configured start
// moved later than the window, or the walk turned off), the days it wrote to must still be walked
// again: they join the ledger as never walked, and the reconciliation walks them first
// (docs/reconciliation.md, "Every day a threat is on is walked again"). Before, such a row stayed
// current for good, on a day no walk looked at again.
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { runCli } from './support/cli.js';
import { mirrorEnvFor, organizationKey, startTestStandin } from './support/service.js';
import { tempDbPath } from './support/temp.js';
import { currentThreats, daysBack, listed, overdueDays } from './support/walk-data.js';

const KEY = 'acme-abandoned-walk-key';
const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const TARGET = addDays(TODAY, -11);
/** 12 pages: more than a run's history budget (5 requests). */
const DENSE = addDays(TODAY, -10);
const FIRST_RUN_FROM = addDays(TODAY, -9);

describe('a history walk left midway for good', { timeout: 120_000 }, () => {
  it.each([
    { change: 'the configured start moved later than its window', settings: { THREAT_MIRROR_HISTORY_FROM: FIRST_RUN_FROM } },
    { change: 'the walk turned off', settings: { THREAT_MIRROR_HISTORY_MAX_REQUESTS: '0' } },
  ])('$change: what it wrote is walked again, and a threat unblocked on its pages goes', async ({ settings }) => {
    const threats = daysBack(TODAY, 11, (back) => (back === 10 ? 1_200 : 20), { firstId: 100_000, host: 'abandoned' });
    const service = await startTestStandin({ threats, keys: organizationKey(KEY), now: () => new Date(NOW) });
    const dbPath = tempDbPath();
    const walking = { THREAT_MIRROR_INITIAL_DAYS: '10', THREAT_MIRROR_HISTORY_FROM: TARGET, THREAT_MIRROR_HISTORY_MAX_REQUESTS: '5', THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '100' };
    expect((await runCli(['--once'], mirrorEnvFor(KEY, NOW, walking)(service, dbPath))).code).toBe(0);
    const denseHeld = currentThreats(dbPath).filter((threat) => threat.blockedAt.startsWith(DENSE));
    expect(denseHeld.length, 'the first run stops within the dense day').toBeGreaterThan(0);
    expect(denseHeld.length).toBeLessThan(1_200);
    const unblocked = denseHeld[0]?.id as number;
    service.removeThreats([unblocked]);

    const env = mirrorEnvFor(KEY, NOW, { ...walking, ...settings })(service, dbPath);
    for (let run = 0; run < 3; run += 1) {
      const result = await runCli(['--once'], env);
      expect([result.code, result.stderr]).toEqual([0, '']);
    }
    expect(overdueDays(dbPath)).toBe(0);
    expect(currentThreats(dbPath).map((threat) => threat.id)).not.toContain(unblocked);
    const dense = (rows: ReadonlyArray<{ id: number; blockedAt: string }>): number[] => rows.filter((threat) => threat.blockedAt.startsWith(DENSE)).map((threat) => threat.id);
    expect(dense(currentThreats(dbPath))).toEqual(dense(listed(service, KEY)));
  });
});
