// A reconciliation window whose removal checks its budget did not cover waits for them, unwalked,
// and enters the ledger when the last one settles (docs/reconciliation.md, "Checks carried over").
// Its pages were read by the walk that carried the checks: a threat unblocked on them since is in
// none of its checks. The ledger must say the days were read when that walk began, not when the
// checks settled, or the reconciliation holds them fresh for THREAT_MIRROR_RECONCILE_DAYS more and
// the unblocked threat stays current meanwhile. The compiled CLI against the stand-in, into a real
// SQLite file.
import { describe, expect, it } from 'vitest';
import { backfilledHalves } from './support/backfilled-halves.js';
import { runCli } from './support/cli.js';
import { withDb } from './support/mirror-db.js';
import { mirrorEnvFor } from './support/service.js';
import { carriedWindows, currentThreats, listed, overdueDays } from './support/walk-data.js';

const NOW = '2026-11-15T12:00:00.000Z';
/** Eight days later: every day the backfills walked is due (THREAT_MIRROR_RECONCILE_DAYS 7). */
const LATER = '2026-11-23T12:00:00.000Z';
/** Eight days after that: what LATER's walk read is due again, whenever its checks settled. */
const SETTLED = '2026-12-01T12:00:00.000Z';
const KEY = 'acme-key-carried-ledger';
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_RETRY_MIN_MS: '5', THREAT_MIRROR_RETRY_MAX_MS: '50' });

describe('a window whose removal checks were carried over', { timeout: 120_000 }, () => {
  it('enters the ledger as read by the walk that carried them, when it began: a threat unblocked since on its pages is found', async () => {
    const { service, dbPath, threats, sixth, tenth } = await backfilledHalves(KEY, NOW, env);
    const lastFive = threats.filter((threat) => threat.blockedAt >= sixth);
    service.removeThreats([lastFive[7]?.id as number, lastFive[57]?.id as number]);

    const run = async (now: string, budget: number): Promise<void> => {
      const result = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_NOW: now, THREAT_MIRROR_RECONCILE_MAX_REQUESTS: String(budget) }));
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
    };
    // A budget of 1: the walk of the last five days (one page) spends it; its two checks wait.
    await run(LATER, 1);
    expect(carriedWindows(dbPath)).toEqual([`${sixth}..${tenth}`]);
    const carryingRun = withDb(dbPath, (db) => db.prepare("SELECT max(id) FROM sync_runs WHERE organization = 'acme' AND mode = 'reconcile'").pluck().get() as number);
    // Unblocked after that walk read it: no check of it is waiting.
    const unblockedSince = lastFive[30]?.id as number;
    service.removeThreats([unblockedSince]);

    await run(SETTLED, 5);
    expect(carriedWindows(dbPath)).toEqual([]);
    // The clock THREAT_MIRROR_NOW sets runs on from that instant: the walk began within a minute of LATER.
    const ledger = withDb(dbPath, (db) => db.prepare("SELECT substr(completed_at, 1, 15) AS completedAt, run_id AS runId FROM sync_windows WHERE organization = 'acme' AND day = ?").get(sixth));
    expect(ledger, 'the carried window as the ledger holds it once its checks settled').toEqual({ completedAt: LATER.slice(0, 15), runId: carryingRun });
    for (let more = 0; more < 4 && overdueDays(dbPath) > 0; more += 1) await run(SETTLED, 5);
    expect(overdueDays(dbPath)).toBe(0);
    expect(currentThreats(dbPath).map((threat) => threat.id)).not.toContain(unblockedSince);
    expect(currentThreats(dbPath)).toEqual(listed(service, KEY));
  });
});
