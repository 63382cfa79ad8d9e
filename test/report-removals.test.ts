// Reports the service no longer lists: marked removed_at once two walks that covered them did not
// list them (one absence proves nothing while the list may shift under a walk), left out of
// rejected_proposals, and restored when they are listed again.
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateReports, type Standin, type StandinReport } from '../src/standin/index.js';
import { runCli } from './support/cli.js';
import { withDb } from './support/mirror-db.js';
import { mirrorEnvFor, startTestStandin } from './support/service.js';
import { tempDbPath } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEY = 'acme-removals-key';
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_REPORTS: '1', THREAT_MIRROR_INITIAL_DAYS: '20', THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '0' });

function start(count: number): Promise<Standin> {
  return startTestStandin({
    reports: generateReports({ seed: 31, organizations: ['acme'], count, fromDay: addDays(TODAY, -19), toDay: TODAY }),
    keys: { organizationKeys: { [KEY]: 'acme' }, userKeys: {} },
    now: () => new Date(NOW),
  });
}

interface ReportState {
  id: string;
  missed_walk: number | null;
  removed_at: string | null;
}

const states = (dbPath: string): ReportState[] =>
  withDb(dbPath, (db) => db.prepare("SELECT id, missed_walk, removed_at FROM reports WHERE organization = 'acme' ORDER BY id").all() as ReportState[]);
const marked = (dbPath: string): { missed: string[]; removed: string[] } => ({
  missed: states(dbPath).filter((row) => row.missed_walk !== null && row.removed_at === null).map((row) => row.id),
  removed: states(dbPath).filter((row) => row.removed_at !== null).map((row) => row.id),
});
const rejectedReportIds = (dbPath: string): string[] =>
  withDb(dbPath, (db) => db.prepare("SELECT DISTINCT report_id FROM rejected_proposals WHERE organization = 'acme' ORDER BY report_id").pluck().all() as string[]);

async function once(service: Standin, dbPath: string, extra: Record<string, string> = {}): Promise<void> {
  const result = await runCli(['--once'], env(service, dbPath, extra));
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
}

const hasRejected = (report: StandinReport): boolean => report.proposals.some((proposal) => proposal.reviewStatus === 'REJECTED');

describe('reports no longer listed upstream', () => {
  it('are marked removed_at after two covering walks missed them, leave rejected_proposals, and come back when listed again', async () => {
    const service = await start(300);
    const dbPath = tempDbPath();
    await once(service, dbPath);
    const all = service.reportsOf('acme');
    const recent = all.find((report) => report.createdAt >= `${addDays(TODAY, -1)}T00:00:00.000Z` && hasRejected(report)) as StandinReport;
    const old = all.find((report) => report.createdAt < `${addDays(TODAY, -15)}T00:00:00.000Z` && hasRejected(report)) as StandinReport;
    expect(recent).toBeDefined();
    expect(old).toBeDefined();
    const [recentId, oldId] = [String(recent.id), String(old.id)];
    expect(rejectedReportIds(dbPath)).toEqual(expect.arrayContaining([recentId, oldId]));
    service.removeReports([recent.id, old.id]);

    // Incremental runs re-read the last 5 days and stop at the first older report held unchanged:
    // they vouch for what is newer than that, so only the recent report is missed, once, then twice.
    const recentDays = { THREAT_MIRROR_REPORTS_RECENT_DAYS: '5' };
    await once(service, dbPath, recentDays);
    expect(marked(dbPath)).toEqual({ missed: [recentId], removed: [] });
    expect(rejectedReportIds(dbPath)).toContain(recentId);
    await once(service, dbPath, recentDays);
    expect(marked(dbPath)).toEqual({ missed: [], removed: [recentId] });
    expect(rejectedReportIds(dbPath)).not.toContain(recentId);
    expect(rejectedReportIds(dbPath)).toContain(oldId);
    const lastRun = withDb(dbPath, (db) => db.prepare("SELECT reports_removed FROM sync_runs WHERE stream = 'reports' ORDER BY id DESC LIMIT 1").pluck().get());
    expect(lastRun).toBe(1);

    // A backfill of the old days reads them whole: two such walks mark the old report too.
    const backfill = ['--backfill', '--from', addDays(TODAY, -19), '--to', addDays(TODAY, -10)];
    expect((await runCli(backfill, env(service, dbPath))).code).toBe(0);
    expect(marked(dbPath)).toEqual({ missed: [oldId], removed: [recentId] });
    expect((await runCli(backfill, env(service, dbPath))).code).toBe(0);
    expect(marked(dbPath)).toEqual({ missed: [], removed: [oldId, recentId].sort() });
    expect(rejectedReportIds(dbPath)).not.toContain(oldId);
    // Everything still listed is untouched, and the rows themselves stay (history).
    expect(states(dbPath)).toHaveLength(all.length);

    // Listed again: restored by the next walk that lists it.
    service.addReports([recent]);
    await once(service, dbPath, recentDays);
    expect(marked(dbPath)).toEqual({ missed: [], removed: [oldId] });
    expect(rejectedReportIds(dbPath)).toContain(recentId);
  });

  it('a report deleted during a walk shifts the list: the live report skipped is only missed once, never marked removed', async () => {
    const service = await start(300);
    const dbPath = tempDbPath();
    await once(service, dbPath);
    // How many threat requests an incremental run makes before its reports walk (the same next time).
    const before = service.stats.requests.length;
    await once(service, dbPath);
    const threatRequests = service.stats.requests.slice(before).filter((request) => request.path === '/threats/list').length;
    const newestFirst = service.reportsOf('acme').sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
    const deleted = newestFirst[10] as StandinReport;
    const skipped = newestFirst[100] as StandinReport; // the first of page 2 moves up into page 1, already read

    service.setLatency(150);
    const arrived = service.stats.requests.length;
    const run = runCli(['--once'], env(service, dbPath));
    // The walk's second page has been asked for, not yet answered: the list shifts under it.
    await service.waitForRequests(arrived + threatRequests + 2);
    service.removeReports([deleted.id]);
    expect((await run).code).toBe(0);
    service.setLatency(0);
    expect(service.stats.requests.filter((request) => request.path === '/organization/reports').at(-3)?.body).not.toHaveProperty('cursor');
    expect(marked(dbPath)).toEqual({ missed: [String(skipped.id)], removed: [] });

    // The next walk lists it: cleared. The deleted one is missed now, and removed at the walk after.
    await once(service, dbPath);
    expect(marked(dbPath)).toEqual({ missed: [String(deleted.id)], removed: [] });
    await once(service, dbPath);
    expect(marked(dbPath)).toEqual({ missed: [], removed: [String(deleted.id)] });
  });
});
