// Walks the service's list changes under (issue 33 items 1-3): an unblock between two pages, an
// unblock while a walk is stopped, a threat moved to another day. The compiled CLI against the
// stand-in, whose offset paging shifts exactly as a page-numbered list does, into a real SQLite file.
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import type { Standin, StandinThreat } from '../src/standin/index.js';
import { runCli, startCli } from './support/cli.js';
import { scalar, withDb } from './support/mirror-db.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { currentThreats, listed, removedIds, threatsOfDay } from './support/walk-data.js';
import { tempDbPath } from './support/temp.js';

// Noon, so "today" cannot flip between the test and the CLI.
const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEY = 'acme-key-5f2b9c';
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_RETRY_MIN_MS: '5', THREAT_MIRROR_RETRY_MAX_MS: '50', THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '0', LOG_LEVEL: 'debug' });

/** What the ledger recorded of a day, and what the mirror holds of it now. */
function ledgerDay(dbPath: string, day: string): { records: number | null; current: number } {
  return withDb(dbPath, (db) => ({
    records: db.prepare("SELECT records FROM sync_windows WHERE organization = 'acme' AND day = ?").pluck().get(day) as number | null,
    current: db.prepare("SELECT count(*) FROM current_threats WHERE organization = 'acme' AND substr(blocked_at, 1, 10) = ?").pluck().get(day) as number,
  }));
}

describe('a walk the list shifts under', { timeout: 120_000 }, () => {
  it('never marks removed a threat an unblock between two pages pushed out of the walk, and walks the window again', async () => {
    const day = addDays(TODAY, -1);
    const service = await serveThreats(KEY, NOW, threatsOfDay(day, 10_000, 250));
    const dbPath = tempDbPath();
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    expect(currentThreats(dbPath)).toHaveLength(250);

    // Once page 2 of the next walk is served, 10000 (on page 1) is unblocked: every later record
    // moves up one place, and 10200, the first of page 3, is now the last of page 2.
    service.onListRequest({ match: { page: '2', withQuery: false }, change: { remove: [10_000] } });
    const result = await runCli(['--once'], env(service, dbPath));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(removedIds(dbPath)).not.toContain(10_200);
    // The window was walked again, whole: 10000's unblock is seen and confirmed.
    expect(removedIds(dbPath)).toEqual([10_000]);
    expect(currentThreats(dbPath)).toEqual(listed(service, KEY));
    expect(ledgerDay(dbPath, day)).toEqual({ records: 249, current: 249 });
    expect(result.logs.some((line) => line.msg === 'the list shifted under the walk: walking this window again from its first page')).toBe(true);
  });

  it('resumes a stopped walk only where the list has not shifted: five unblocks ahead of the cursor restart the window', async () => {
    const day = addDays(TODAY, -3);
    const service = await serveThreats(KEY, NOW, threatsOfDay(day, 20_000, 500));
    const dbPath = tempDbPath();
    const args = ['--backfill', '--from', day, '--to', day];
    // Page 3 never answers: the walk stops with pages 1 and 2 committed and cursor "3" stored.
    service.onListRequest({ match: { page: '3' }, fault: { kind: 'hang' } });
    const stopped = startCli(args, env(service, dbPath));
    await stopped.waitForLog(() => stopped.logs.filter((line) => line.msg === 'page committed').length >= 2);
    await stopped.stop('SIGKILL');
    expect(scalar(dbPath, 'SELECT next_page FROM sync_cursors')).toBe('3');

    // Five threats of page 1 are unblocked: the five first of page 3 are now the last of page 2.
    const unblocked = [20_000, 20_010, 20_020, 20_030, 20_040];
    service.removeThreats(unblocked);
    const resumed = await runCli(args, env(service, dbPath));
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(currentThreats(dbPath)).toEqual(listed(service, KEY));
    expect(removedIds(dbPath)).toEqual(unblocked);
    expect(ledgerDay(dbPath, day)).toEqual({ records: 495, current: 495 });
    expect(resumed.logs.some((line) => line.msg === 'the list shifted since the stored cursor: restarting this window from its first page')).toBe(true);
  });

  /** 30 days of 20 threats each, backfilled. */
  async function backfilledMonth(): Promise<{ service: Standin; dbPath: string; threats: StandinThreat[] }> {
    const first = addDays(TODAY, -29);
    const threats = Array.from({ length: 30 }, (_, index) => threatsOfDay(addDays(first, index), 30_000 + index * 100, 20)).flat();
    const service = await serveThreats(KEY, NOW, threats);
    const dbPath = tempDbPath();
    expect((await runCli(['--backfill', '--from', first], env(service, dbPath))).code).toBe(0);
    return { service, dbPath, threats };
  }

  it('updates a threat moved to an older day, never marks it removed, when the re-scan misses it on its old day', async () => {
    const { service, dbPath, threats } = await backfilledMonth();
    // Yesterday's threat re-dated to 20 days ago: the incremental re-scan of yesterday misses it.
    const moved = threats.find((threat) => threat.blockedAt.startsWith(addDays(TODAY, -1))) as StandinThreat;
    const newDay = addDays(TODAY, -20);
    service.updateThreat(moved.id, { blockedAt: `${newDay}T08:00:00.000Z` });
    const rescan = await runCli(['--once'], env(service, dbPath));
    expect(rescan.code).toBe(0);
    expect(removedIds(dbPath)).toEqual([]);
    expect(scalar(dbPath, 'SELECT blocked_at FROM threats WHERE id = ?', moved.id)).toBe(`${newDay}T08:00:00.000Z`);
    expect(currentThreats(dbPath)).toEqual(listed(service, KEY));
  });

  it('updates a threat moved out of the days verify checks, instead of "repairing" it away', async () => {
    const { service, dbPath, threats } = await backfilledMonth();
    const day = addDays(TODAY, -10);
    const moved = threats.find((threat) => threat.blockedAt.startsWith(day)) as StandinThreat;
    service.updateThreat(moved.id, { blockedAt: `${addDays(TODAY, -25)}T08:00:00.000Z` });
    const verify = await runCli(['verify', '--from', day, '--to', day], env(service, dbPath));
    expect(verify.code).toBe(0);
    expect(removedIds(dbPath)).toEqual([]);
    expect(currentThreats(dbPath)).toEqual(listed(service, KEY));
    // The day itself drifted (the threat left it) and was repaired.
    expect(verify.stdout).toContain('1 drifted');
    expect(verify.stdout).toMatch(/repaired/);
  });
});
