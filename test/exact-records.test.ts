// Contents exact or rejected, nothing merged unseen, no report forgotten (issue 40, cases 5 and 7):
// a record whose content is not well-formed Unicode is kept aside as received, two records of one id
// in a page are counted and the second kept aside, and a report deleted upstream long ago is marked
// removed by the rolling walk of the whole list. The compiled CLI against the stand-in, a real file.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateReports, type Standin, type StandinReport } from '../src/standin/index.js';
import { runCli } from './support/cli.js';
import { withDb } from './support/mirror-db.js';
import { mirrorEnvFor, serveThreats, startTestStandin } from './support/service.js';
import { tempDbPath } from './support/temp.js';
import { currentThreats, listed, threatsOfDay } from './support/walk-data.js';

const NOW = '2026-11-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEY = 'acme-key-40-exact';
// One day, one window: the records a fault adds go on the page of the day they belong to.
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_RETRY_MIN_MS: '5', THREAT_MIRROR_RETRY_MAX_MS: '50', THREAT_MIRROR_INITIAL_DAYS: '1' });

interface Rejected {
  raw: string;
  reason: string;
}
const rejectedRows = (dbPath: string): Rejected[] => withDb(dbPath, (db) => db.prepare('SELECT raw, reason FROM rejected_records ORDER BY id').all() as Rejected[]);
const runCounts = (dbPath: string): { inserted: number; rejected: number } =>
  withDb(dbPath, (db) => db.prepare("SELECT sum(threats_inserted) AS inserted, sum(threats_rejected) AS rejected FROM sync_runs WHERE stream = 'threats'").get()) as { inserted: number; rejected: number };

describe('case 5: a content that is not well-formed Unicode', { timeout: 60_000 }, () => {
  it('is rejected with its reason and kept as the JSON text received; every stored content decodes as strict UTF-8', async () => {
    const threats = threatsOfDay(TODAY, 700_000, 3);
    const service = await serveThreats(KEY, NOW, threats);
    // Valid JSON: a lone surrogate, escaped, in a content, beside a well-formed astral character.
    const lone = `{"id":700100,"content":"https://lone.example/\\ud800x","type":"URL","blockedAt":"${TODAY}T01:00:00.000Z"}`;
    const pair = `{"id":700101,"content":"https://pair.example/\\ud83d\\ude00","type":"URL","blockedAt":"${TODAY}T01:00:00.000Z"}`;
    service.faults.enqueue({ kind: 'rawRecords', records: [lone, pair] });
    const dbPath = tempDbPath();
    const result = await runCli(['--once'], env(service, dbPath));
    expect(result.code).toBe(0);
    expect(rejectedRows(dbPath)).toEqual([{ raw: lone, reason: expect.stringContaining('content is not well-formed Unicode') }]);
    expect(currentThreats(dbPath).map((threat) => threat.id)).toEqual([...threats.map((threat) => threat.id), 700101]);
    // What strict readers see (Python's sqlite3 decodes text as strict UTF-8): every content is exact.
    const bytes = withDb(dbPath, (db) => db.prepare('SELECT CAST(content AS BLOB) FROM current_threats').pluck().all() as Buffer[]);
    const strict = new TextDecoder('utf-8', { fatal: true });
    for (const content of bytes) expect(() => strict.decode(content)).not.toThrow();
    expect(withDb(dbPath, (db) => db.prepare('SELECT content FROM threats WHERE id = 700101').pluck().get())).toBe('https://pair.example/\u{1F600}');
    // The bytes as the sqlite3 program reads them from the file: every stored content strict UTF-8.
    const stored = execFileSync('sqlite3', ['-readonly', dbPath, 'SELECT hex(content) FROM threats'], { encoding: 'utf8' }).trim().split('\n');
    expect(stored).toHaveLength(4);
    for (const hex of stored) expect(() => strict.decode(Buffer.from(hex, 'hex'))).not.toThrow();
    const csv = await runCli(['export', '--format', 'csv'], { THREAT_MIRROR_DB: dbPath });
    expect(csv.stdout).not.toContain('\uFFFD');
  });
});

describe('case 7: quiet merges and forgotten reports', { timeout: 120_000 }, () => {
  it('counts two records of one id in a page and keeps the second aside, instead of letting the last replace the first', async () => {
    const threats = threatsOfDay(TODAY, 710_000, 3);
    const service = await serveThreats(KEY, NOW, threats);
    const first = threats[1] as (typeof threats)[number];
    const second = `{"id":${first.id},"content":"https://other.example/","type":"PAGE","blockedAt":"${first.blockedAt}"}`;
    service.faults.enqueue({ kind: 'rawRecords', records: [second] });
    const dbPath = tempDbPath();
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    expect(currentThreats(dbPath)).toEqual(listed(service, KEY));
    expect(rejectedRows(dbPath)).toEqual([{ raw: second, reason: `id ${first.id} is listed more than once in this page: the first record with it is taken, this one is kept aside` }]);
    expect(runCounts(dbPath)).toEqual({ inserted: 3, rejected: 1 });
  });

  it('marks a report deleted upstream long before the recent days removed, by the rolling walk of the whole list', async () => {
    const service: Standin = await startTestStandin({
      reports: generateReports({ seed: 40, organizations: ['acme'], count: 250, fromDay: addDays(TODAY, -60), toDay: TODAY }),
      keys: { organizationKeys: { [KEY]: 'acme' }, userKeys: {} },
      now: () => new Date(NOW),
    });
    const dbPath = tempDbPath();
    const reports = { THREAT_MIRROR_REPORTS: '1', THREAT_MIRROR_INITIAL_DAYS: '60', THREAT_MIRROR_REPORTS_RECENT_DAYS: '5', THREAT_MIRROR_RECONCILE_DAYS: '7' };
    expect((await runCli(['--once'], env(service, dbPath, reports))).code).toBe(0);
    const old = service.reportsOf('acme').find((report) => report.createdAt < `${addDays(TODAY, -40)}T00:00:00.000Z` && report.proposals.some((proposal) => proposal.reviewStatus === 'REJECTED')) as StandinReport;
    expect(old).toBeDefined();
    const rejectedOf = (path: string): string[] => withDb(path, (db) => db.prepare("SELECT DISTINCT report_id FROM rejected_proposals WHERE organization = 'acme'").pluck().all() as string[]);
    expect(rejectedOf(dbPath)).toContain(String(old.id));
    service.removeReports([old.id]);
    // Runs a week apart: each reads the whole list once (every THREAT_MIRROR_RECONCILE_DAYS); two misses mark it.
    for (const later of [8, 16, 24]) {
      const at = new Date(Date.parse(NOW) + later * 86_400_000).toISOString();
      const result = await runCli(['--once'], env(service, dbPath, { ...reports, THREAT_MIRROR_NOW: at }));
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
    }
    const removedAt = withDb(dbPath, (db) => db.prepare("SELECT removed_at FROM reports WHERE organization = 'acme' AND id = ?").pluck().get(String(old.id)));
    expect(removedAt).not.toBeNull();
    expect(rejectedOf(dbPath)).not.toContain(String(old.id));
    // Only the deleted report: every other stays.
    expect(withDb(dbPath, (db) => db.prepare("SELECT count(*) FROM reports WHERE organization = 'acme' AND removed_at IS NULL").pluck().get())).toBe(249);
  });
});
