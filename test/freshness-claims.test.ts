// What the mirror claims about how complete and how fresh it is (issue 33 items 5-6, issue 27 items
// 2 and 5): complete_through only for days whose windows were walked after the day ended, a
// resumed plan never vouching for a day it did not finish, no plan left behind by a rerun after
// midnight, and stale / last_success_at from the incremental sync alone.
import { describe, expect, it } from 'vitest';
import { checkReadiness } from '../src/daemon/readiness.js';
import { addDays } from '../src/lib/days.js';
import type { Standin } from '../src/standin/index.js';
import { type CliProcess, runCli, startCli } from './support/cli.js';
import { scalar, withDb } from './support/mirror-db.js';
import { type Env, mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath } from './support/temp.js';
import { currentThreats, threatsOfDay } from './support/walk-data.js';

const KEY = 'acme-key-5f2b9c';

const SETTINGS: Env = { THREAT_MIRROR_RETRY_MIN_MS: '5', THREAT_MIRROR_RETRY_MAX_MS: '50', THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '0', LOG_LEVEL: 'debug' };
/** The mirror with its clock at `now`: each test moves it. */
const env = (service: Standin, dbPath: string, now: string, extra: Env = {}): Env => mirrorEnvFor(KEY, now, SETTINGS)(service, dbPath, extra);

function completeThrough(dbPath: string): string | null {
  return scalar<string | null>(dbPath, "SELECT complete_through FROM sync_checkpoints WHERE organization = 'acme'") ?? null;
}

/** Resolves once the window ending on `windowEnd` has committed its last page. */
function windowCompleted(cli: CliProcess, windowEnd: string): Promise<unknown> {
  return cli.waitForLog((line) => line.msg === 'page committed' && typeof line.window === 'string' && line.window.endsWith(`..${windowEnd}`) && line.nextPage === null);
}

/** Threats of each day between two days, `perDay` a day, ids rising with the day. */
function daysOfThreats(from: string, to: string, perDay: number, firstId = 50_000): ReturnType<typeof threatsOfDay> {
  const days = Math.round((Date.parse(to) - Date.parse(from)) / 86_400_000) + 1;
  return Array.from({ length: days }, (_, index) => threatsOfDay(addDays(from, index), firstId + index * 1000, perDay)).flat();
}

describe('complete_through', { timeout: 120_000 }, () => {
  it('does not move past a day whose window a killed run walked before the day ended, when the plan is resumed days later', async () => {
    const service = await serveThreats(KEY, '2026-11-20T12:00:00.000Z', daysOfThreats('2026-11-07', '2026-11-20', 30));
    const dbPath = tempDbPath();
    const first = env(service, dbPath, '2026-11-20T12:00:00.000Z', { THREAT_MIRROR_INITIAL_DAYS: '14', THREAT_MIRROR_CONCURRENCY: '2' });
    // The first window, 11-07..11-13, stops at its second page; the other worker walks the rest, to the window ending on 11-20.
    service.onListRequest({ match: { startDate: '2026-11-07', page: '2', withQuery: false }, fault: { kind: 'hang' } });
    const killed = startCli(['--once'], first);
    await windowCompleted(killed, '2026-11-20');
    await killed.stop('SIGKILL');

    // Blocked late on 11-20, after the window ending that day was walked.
    const late = { id: 99_000, content: 'https://late-on-the-20th.example/', type: 'URL', blockedAt: '2026-11-20T20:00:00.000Z', organization: 'acme' };
    service.addThreats([late]);
    const resumed = await runCli(['--once'], env(service, dbPath, '2026-11-24T12:00:00.000Z'));
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(currentThreats(dbPath).map((threat) => threat.id)).toContain(late.id);
    expect(completeThrough(dbPath)).toBe('2026-11-23');
    expect(scalar(dbPath, 'SELECT count(*) FROM sync_plans')).toBe(0);
  });

  it('stops before a day the run began walking before midnight, though the run ends after it', async () => {
    const service = await serveThreats(KEY, '2026-11-20T23:59:59.000Z', daysOfThreats('2026-11-18', '2026-11-20', 200));
    // The walk begins five seconds before midnight (room for a slow start on a loaded machine); its
    // second page comes six seconds later, after midnight.
    service.onListRequest({ match: { page: '2' }, fault: { kind: 'delay', ms: 6000 } });
    const dbPath = tempDbPath();
    const result = await runCli(['--backfill', '--from', '2026-11-18'], env(service, dbPath, '2026-11-20T23:59:55.000Z'));
    expect(result.code).toBe(0);
    const finishedAt = scalar<string>(dbPath, 'SELECT finished_at FROM sync_runs ORDER BY id DESC LIMIT 1');
    expect(finishedAt.slice(0, 10)).toBe('2026-11-21');
    expect(completeThrough(dbPath)).toBe('2026-11-19');
  });
});

describe('a backfill without --to, rerun after midnight', { timeout: 120_000 }, () => {
  it('resumes its plan extended by the new day, re-fetches no committed page, and leaves no plan behind', async () => {
    const service = await serveThreats(KEY, '2026-11-20T23:00:00.000Z', daysOfThreats('2026-11-08', '2026-11-21', 40));
    const dbPath = tempDbPath();
    const args = ['--backfill', '--from', '2026-11-08'];
    service.onListRequest({ match: { startDate: '2026-11-08', page: '2', withQuery: false }, fault: { kind: 'hang' } });
    const killed = startCli(args, env(service, dbPath, '2026-11-20T23:00:00.000Z', { THREAT_MIRROR_CONCURRENCY: '2' }));
    await windowCompleted(killed, '2026-11-20');
    await killed.stop('SIGKILL');
    const before = service.stats.requests.length;

    const rerun = await runCli(args, env(service, dbPath, '2026-11-21T00:05:00.000Z', { THREAT_MIRROR_CONCURRENCY: '2' }));
    expect(rerun.stderr).toBe('');
    expect(rerun.code).toBe(0);
    expect(scalar(dbPath, 'SELECT count(*) FROM sync_plans')).toBe(0);
    expect(withDb(dbPath, (db) => db.prepare('SELECT mode, range_start, range_end FROM sync_runs ORDER BY id').all())).toEqual([
      { mode: 'backfill', range_start: '2026-11-08', range_end: '2026-11-20' },
      { mode: 'backfill', range_start: '2026-11-08', range_end: '2026-11-21' },
    ]);
    // The stopped window goes on from its cursor "2": its first page is read once, as the check that the list did not shift, and nothing is re-fetched.
    const again = service.stats.requests.slice(before).map((request) => request.body as { startDate: string; next_page?: string; query?: string });
    expect(again.filter((body) => body.startDate === '2026-11-08').map((body) => body.next_page ?? '1')).toEqual(['1', '2', '3']);
    expect(currentThreats(dbPath)).toHaveLength(14 * 40);
    // 11-20 was walked again after it ended; 11-21 was walked on 11-21.
    expect(completeThrough(dbPath)).toBe('2026-11-20');
  });
});

describe('stale and last_success_at', { timeout: 120_000 }, () => {
  it('speak of the incremental sync alone: a verify or an old-range backfill that succeeds changes neither', async () => {
    const now = '2026-03-15T12:00:00.000Z';
    const service = await serveThreats(KEY, now, daysOfThreats('2026-02-01', '2026-03-15', 10));
    const dbPath = tempDbPath();
    // The incremental sync fails: the service answers 500 to everything.
    service.faults.enqueue({ kind: 'status', status: 500 }, { times: 1000 });
    const failed = await runCli(['--once'], env(service, dbPath, now, { THREAT_MIRROR_MAX_RETRIES: '0' }));
    expect(failed.code).toBe(1);
    service.faults.clear();
    const status = (): unknown => withDb(dbPath, (db) => db.prepare("SELECT last_success_at, stale, last_run_status FROM sync_status WHERE organization = 'acme'").get());
    const failing = { last_success_at: null, stale: 1, last_run_status: 'failed' };
    expect(status()).toEqual(failing);

    expect((await runCli(['verify', '--from', '2026-02-10', '--to', '2026-02-10'], env(service, dbPath, now))).code).toBe(0);
    expect(status()).toEqual(failing);
    expect((await runCli(['--backfill', '--from', '2026-02-01', '--to', '2026-02-20'], env(service, dbPath, now))).code).toBe(0);
    expect(status()).toEqual(failing);
    const readiness = withDb(dbPath, (db) => checkReadiness(db, ['acme'], new Date(Date.parse(now) + 60_000), 1200));
    expect(readiness.ready).toBe(false);
  });
});
