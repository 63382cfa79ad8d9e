// A window whose walk a run's budget cut short is resumed by a later run from its stored cursor
// (the history walk, a killed backfill). Its first pages were read when the walk began: a threat
// unblocked there since, with another blocked before the cursor so that the list did not shift
// (the cursor's check passes), is neither seen missing nor seen new by the resumed walk. The
// ledger must then say the day was read when its walk began, not when it ended, so that the
// reconciliation's rule (re-walk what was read longer than THREAT_MIRROR_RECONCILE_DAYS ago)
// holds of what the rows are. Found by the random model (seed 4029: a threat unblocked on a page
// of a history window read a day before the window was finished stayed through every run).
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { runCli } from './support/cli.js';
import { withDb } from './support/mirror-db.js';
import { mirrorEnvFor, organizationKey, startTestStandin } from './support/service.js';
import { tempDbPath } from './support/temp.js';
import { currentThreats, daysBack, listed } from './support/walk-data.js';

const KEY = 'acme-resumed-walk-key';
const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
/** Two days later: the first run's reads are then older than THREAT_MIRROR_RECONCILE_DAYS (1). */
const LATER = new Date(Date.parse(NOW) + 2 * 86_400_000).toISOString();
const TARGET = addDays(TODAY, -11);
/** The history's one dense day: 12 pages, more than a run's history budget (5 requests). */
const DENSE = addDays(TODAY, -10);

describe('a window resumed from its stored cursor', () => {
  it("enters the ledger as read when its walk began: the reconciliation re-walks it, and a change under its first pages is found", async () => {
    // Even ids on the dense day: an odd one blocked later sorts between two of them.
    const threats = daysBack(TODAY, 11, (back) => (back === 10 ? 1_200 : 20), { firstId: 100_000, idStep: 2, host: 'resumed' });
    let now = NOW;
    const service = await startTestStandin({ threats, keys: organizationKey(KEY), now: () => new Date(now) });
    const dbPath = tempDbPath();
    const settings = {
      THREAT_MIRROR_INITIAL_DAYS: '10',
      THREAT_MIRROR_HISTORY_FROM: TARGET,
      THREAT_MIRROR_HISTORY_MAX_REQUESTS: '5',
      THREAT_MIRROR_RECONCILE_DAYS: '1',
      THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '100',
    };
    expect((await runCli(['--once'], mirrorEnvFor(KEY, NOW, settings)(service, dbPath))).code).toBe(0);
    const denseHeld = currentThreats(dbPath).filter((threat) => threat.blockedAt.startsWith(DENSE));
    expect(denseHeld.length, 'the first run stops within the dense day').toBeGreaterThan(0);
    expect(denseHeld.length).toBeLessThan(1_200);
    // Under the first page: one threat unblocked, one blocked, the list no longer and no shorter.
    const [unblocked, next] = denseHeld;
    service.removeThreats([unblocked?.id as number]);
    const blocked = (next?.id as number) + 1;
    service.addThreats([{ id: blocked, type: 'URL', organization: 'acme', blockedAt: `${DENSE}T05:30:00.000Z`, content: `https://resumed${blocked}.example/` }]);

    now = LATER;
    const env = mirrorEnvFor(KEY, LATER, settings)(service, dbPath);
    const historyFrom = (): string | null => withDb(dbPath, (db) => db.prepare("SELECT history_from FROM sync_status WHERE organization = 'acme'").pluck().get() as string | null);
    for (let run = 2; historyFrom() !== TARGET; run += 1) {
      expect(run, `history_from ${historyFrom()}`).toBeLessThanOrEqual(8);
      expect((await runCli(['--once'], env)).code).toBe(0);
    }
    // The run that finished the window: its days were read two days ago, so they were due at once,
    // and that run's reconciliation walked them again (the history walk's row would claim them fresh).
    const ledger = withDb(dbPath, (db) =>
      db.prepare("SELECT r.mode, w.completed_at >= ? AS walkedSince FROM sync_windows w JOIN sync_runs r ON r.id = w.run_id WHERE w.organization = 'acme' AND w.day = ?").get(LATER, DENSE),
    );
    expect(ledger, "the dense day's ledger row after the run that reached the target").toEqual({ mode: 'reconcile', walkedSince: 1 });
    const dense = (rows: ReadonlyArray<{ id: number; blockedAt: string }>): number[] => rows.filter((threat) => threat.blockedAt.startsWith(DENSE)).map((threat) => threat.id);
    expect(dense(currentThreats(dbPath))).toEqual(dense(listed(service, KEY)));
    expect(currentThreats(dbPath)).toEqual(listed(service, KEY));
  });
});
