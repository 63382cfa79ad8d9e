// A reports run counts in sync_runs.reports_* and leaves threats_* to threats runs; a file written
// before migration 0011_report_run_counts gets its report runs' counts moved there.
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateReports, generateThreats, type Standin } from '../src/standin/index.js';
import { mirrorEnvFor, startTestStandin } from './support/service.js';
import { runCli } from './support/cli.js';
import { createFileBeforeMigration } from './support/older-schema.js';
import { withDb } from './support/mirror-db.js';
import { tempDir } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEY = 'acme-key';


async function start(): Promise<Standin> {
  const threats = generateThreats({ seed: 31, organizations: ['acme'], count: 300, fromDay: addDays(TODAY, -19), toDay: TODAY });
  const standin = await startTestStandin({
    threats,
    reports: generateReports({ seed: 32, organizations: ['acme'], count: 200, fromDay: addDays(TODAY, -19), toDay: TODAY, threats }),
    reportsVariant: 'cursor',
    reportsEnabled: true,
    keys: { organizationKeys: { [KEY]: 'acme' }, userKeys: {} },
    now: () => new Date(NOW),
  });
  return standin;
}

const env = mirrorEnvFor(KEY, NOW);

interface RunCounts {
  stream: string;
  threats_inserted: number;
  threats_updated: number;
  threats_rejected: number;
  threats_removed: number;
  reports_inserted: number;
  reports_updated: number;
  reports_rejected: number;
}

const RUN_COUNTS = `SELECT stream, threats_inserted, threats_updated, threats_rejected, threats_removed, reports_inserted, reports_updated, reports_rejected
                      FROM sync_runs ORDER BY id`;

it('a reports run counts in reports_*, a threats run in threats_*, and status shows each run its own counts', async () => {
  const service = await start();
  const dbPath = join(tempDir(), 'mirror.db');
  const result = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_REPORTS: '1' }));
  expect(result.code).toBe(0);
  const held = withDb(dbPath, (db) => ({
    threats: db.prepare("SELECT count(*) FROM organization_threats WHERE organization = 'acme'").pluck().get() as number,
    reports: db.prepare("SELECT count(*) FROM reports WHERE organization = 'acme'").pluck().get() as number,
    runs: db.prepare(RUN_COUNTS).all() as RunCounts[],
  }));
  expect(held.threats).toBeGreaterThan(0);
  expect(held.reports).toBeGreaterThan(0);
  expect(held.runs).toEqual([
    { stream: 'threats', threats_inserted: held.threats, threats_updated: 0, threats_rejected: 0, threats_removed: 0, reports_inserted: 0, reports_updated: 0, reports_rejected: 0 },
    { stream: 'reports', threats_inserted: 0, threats_updated: 0, threats_rejected: 0, threats_removed: 0, reports_inserted: held.reports, reports_updated: 0, reports_rejected: 0 },
  ]);
  const status = await runCli(['status', '--json'], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW });
  expect(status.code).toBe(0);
  const runs = (JSON.parse(status.stdout) as { organizations: Array<{ recentRuns: Array<{ stream: string; threatsInserted: number }> }> }).organizations[0]?.recentRuns;
  expect(runs).toMatchObject([
    { stream: 'reports', threatsInserted: held.reports },
    { stream: 'threats', threatsInserted: held.threats },
  ]);
});

it('moves the counts of report runs written before the migration out of threats_*, and status reads an unmigrated file', async () => {
  const service = await start();
  const dbPath = join(tempDir(), 'mirror.db');
  // A file at the schema before 0011_report_run_counts, with one run of each stream.
  createFileBeforeMigration(dbPath, '_report_run_counts', (old) =>
    old.exec(`INSERT INTO sync_runs (organization, stream, mode, status, range_start, range_end, started_at, finished_at, pages,
                                   threats_inserted, threats_updated, threats_rejected)
            VALUES ('acme', 'threats', 'backfill', 'succeeded', '2026-01-01', '2026-01-01', 'x', 'x', 1, 5, 1, 0),
                   ('acme', 'reports', 'incremental', 'succeeded', '2026-03-01', '2026-03-14', 'x', 'x', 2, 7, 3, 2)`),
  );

  // status never migrates: on the old file it shows the counts where that version kept them.
  const before = await runCli(['status', '--json'], { THREAT_MIRROR_DB: dbPath });
  // Read whole; and no incremental run ever succeeded there: the mirror cannot vouch (exit 3).
  expect(before.code).toBe(3);
  expect((JSON.parse(before.stdout) as { organizations: Array<{ recentRuns: unknown[] }> }).organizations[0]?.recentRuns).toMatchObject([
    { stream: 'reports', threatsInserted: 7, threatsUpdated: 3, threatsRejected: 2 },
    { stream: 'threats', threatsInserted: 5, threatsUpdated: 1, threatsRejected: 0 },
  ]);

  expect((await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_REPORTS: '0' }))).code).toBe(0);
  const runs = withDb(dbPath, (db) => db.prepare(RUN_COUNTS).all() as RunCounts[]);
  expect(runs.slice(0, 2)).toEqual([
    { stream: 'threats', threats_inserted: 5, threats_updated: 1, threats_rejected: 0, threats_removed: 0, reports_inserted: 0, reports_updated: 0, reports_rejected: 0 },
    { stream: 'reports', threats_inserted: 0, threats_updated: 0, threats_rejected: 0, threats_removed: 0, reports_inserted: 7, reports_updated: 3, reports_rejected: 2 },
  ]);
  const after = await runCli(['status', '--json'], { THREAT_MIRROR_DB: dbPath });
  expect((JSON.parse(after.stdout) as { organizations: Array<{ recentRuns: unknown[] }> }).organizations[0]?.recentRuns).toContainEqual(
    expect.objectContaining({ stream: 'reports', threatsInserted: 7, threatsUpdated: 3, threatsRejected: 2 }),
  );
});
