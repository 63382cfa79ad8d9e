// The whole truth under every configuration (issue 40): every row has a walk that will look at it
// again (case 2), what decides for one organization reads its own rows (case 3), and every writer
// applies one scope (case 4). The compiled CLI against the stand-in, into a real SQLite file.
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { runCli } from './support/cli.js';
import { withDb } from './support/mirror-db.js';
import type { Standin, StandinThreat } from '../src/standin/index.js';
import { mirrorEnvFor, serveThreats, startTestStandin } from './support/service.js';
import { tempDbPath } from './support/temp.js';
import { currentThreats, listed, threatsOfDay } from './support/walk-data.js';

const NOW = '2026-11-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEY = 'acme-key-40-truth';
/** Every mirrored day re-walked at every run, without limit. */
const FULL_RECONCILIATION = { THREAT_MIRROR_RECONCILE_DAYS: '0', THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '100000' };
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_RETRY_MIN_MS: '5', THREAT_MIRROR_RETRY_MAX_MS: '50', LOG_LEVEL: 'info', ...FULL_RECONCILIATION });

describe('case 2: a threat moved to a day outside the mirrored range', { timeout: 120_000 }, () => {
  it('joins that day to the ledger, counted overdue until walked, and an unblock there is marked at the next run', async () => {
    const first = addDays(TODAY, -10);
    const threats = Array.from({ length: 10 }, (_, index) => threatsOfDay(addDays(first, index), 100_000 + index * 1000, 5)).flat();
    const service = await serveThreats(KEY, NOW, threats);
    const dbPath = tempDbPath();
    expect((await runCli(['--backfill', '--from', first], env(service, dbPath))).code).toBe(0);

    // The service corrects a threat's blockedAt to a day long before the mirrored range.
    const moved = threats[12] as (typeof threats)[number];
    const longAgo = addDays(TODAY, -400);
    service.updateThreat(moved.id, { blockedAt: `${longAgo}T08:00:00.000Z` });
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    // Found there by its removal check and written there: that day joined the ledger, never walked.
    expect(currentThreats(dbPath)).toEqual(listed(service, KEY));
    const joined = withDb(dbPath, (db) => db.prepare("SELECT run_id AS runId, completed_at AS completedAt FROM sync_windows WHERE organization = 'acme' AND day = ?").get(longAgo));

    // Unblocked there: the next run walks the joined day, and the threat is no longer current.
    service.removeThreats([moved.id]);
    const result = await runCli(['--once'], env(service, dbPath));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(currentThreats(dbPath)).toEqual(listed(service, KEY));
    expect((await runCli(['lookup', moved.content], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW })).code).toBe(1);
    expect(joined).toEqual({ runId: 0, completedAt: '1970-01-01T00:00:00.000Z' });
    const walked = withDb(dbPath, (db) => db.prepare("SELECT run_id FROM sync_windows WHERE organization = 'acme' AND day = ?").pluck().get(longAgo)) as number;
    expect(walked).toBeGreaterThan(0);
  });

  it('counts a day joined and never walked as overdue in sync_status and status', async () => {
    const first = addDays(TODAY, -5);
    const threats = Array.from({ length: 5 }, (_, index) => threatsOfDay(addDays(first, index), 200_000 + index * 1000, 3)).flat();
    const service = await serveThreats(KEY, NOW, threats);
    const dbPath = tempDbPath();
    // No reconciliation: a joined day stays unwalked, and visible.
    const quiet = { THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '0', THREAT_MIRROR_RECONCILE_DAYS: '7' };
    expect((await runCli(['--backfill', '--from', first], env(service, dbPath, quiet))).code).toBe(0);
    const moved = threats[4] as (typeof threats)[number];
    const longAgo = addDays(TODAY, -90);
    service.updateThreat(moved.id, { blockedAt: `${longAgo}T08:00:00.000Z` });
    expect((await runCli(['verify', '--from', first, '--to', addDays(TODAY, -1)], env(service, dbPath, quiet))).code).toBe(0);
    expect((await runCli(['--once'], env(service, dbPath, quiet))).code).toBe(0);
    const overdue = withDb(dbPath, (db) => db.prepare("SELECT overdue_days, oldest_overdue_day FROM sync_status WHERE organization = 'acme'").get());
    expect(overdue).toEqual({ overdue_days: 1, oldest_overdue_day: longAgo });
    const status = await runCli(['status'], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW });
    expect(status.stdout).toContain(`1 days overdue, oldest ${longAgo}`);
  });
});

const ACME_KEY = 'acme-key-40-scoped';
const USER_KEY = 'user-key-40-all';

const QUICK_RETRIES = { THREAT_MIRROR_RETRY_MIN_MS: '5', THREAT_MIRROR_RETRY_MAX_MS: '50' };
/** acme (its own key, scoped to URL) and all (a user key of acme and beta, every type), every day re-walked at every run. */
const twoOrganizations = mirrorEnvFor({ acme: ACME_KEY, all: USER_KEY }, NOW, { THREAT_MIRROR_ASSET_TYPES_ACME: 'URL', ...QUICK_RETRIES, ...FULL_RECONCILIATION });
/** all alone, as above. */
const allAlone = mirrorEnvFor({ all: USER_KEY }, NOW, { ...QUICK_RETRIES, ...FULL_RECONCILIATION });

function currentOf(dbPath: string, organization: string): Array<{ id: number; type: string }> {
  return withDb(dbPath, (db) => db.prepare('SELECT id, type FROM current_threats WHERE organization = ? ORDER BY id').all(organization)) as Array<{ id: number; type: string }>;
}

describe('case 3: a scoped organization beside another that shares its threats', { timeout: 120_000 }, () => {
  it('removes its row once its threat becomes a PAGE of another organization, even when the other organization wrote the new type first', async () => {
    const first = addDays(TODAY, -6);
    const acme = Array.from({ length: 6 }, (_, index) => threatsOfDay(addDays(first, index), 300_000 + index * 1000, 4)).flat();
    const beta = Array.from({ length: 6 }, (_, index) => threatsOfDay(addDays(first, index), 400_000 + index * 1000, 2, 'beta')).flat();
    const service = await startTestStandin({
      threats: [...acme, ...beta],
      keys: { organizationKeys: { [ACME_KEY]: 'acme' }, userKeys: { [USER_KEY]: [{ organization: 'acme', active: true }, { organization: 'beta', active: true }] } },
      now: () => new Date(NOW),
    });
    const dbPath = tempDbPath();
    expect((await runCli(['--backfill', '--from', first], twoOrganizations(service, dbPath))).code).toBe(0);
    const changed = acme[9] as (typeof acme)[number];
    expect(currentOf(dbPath, 'acme').map((row) => row.id)).toContain(changed.id);

    // acme's URL threat becomes a PAGE of beta; all (which sees both) writes the new type first.
    service.updateThreat(changed.id, { type: 'PAGE', organization: 'beta' });
    expect((await runCli(['--once'], allAlone(service, dbPath))).code).toBe(0);
    expect(withDb(dbPath, (db) => db.prepare('SELECT type FROM threats WHERE id = ?').pluck().get(changed.id))).toBe('PAGE');

    const result = await runCli(['--once'], twoOrganizations(service, dbPath));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    // acme's URL mirror holds acme's URL threats, and no PAGE.
    const acmeListed = service.threatsVisibleTo(ACME_KEY).filter((threat) => threat.type === 'URL');
    expect(currentOf(dbPath, 'acme')).toEqual(acmeListed.map(({ id, type }) => ({ id, type })));
    expect(currentOf(dbPath, 'all')).toEqual(service.threatsVisibleTo(USER_KEY).map(({ id, type }) => ({ id, type })));
    const exported = await runCli(['export', '--format', 'csv', '--org', 'acme'], { THREAT_MIRROR_DB: dbPath });
    expect(exported.code).toBe(0);
    expect(exported.stdout).not.toContain(changed.content);
  });
});

describe('case 4: one scope for every writer', { timeout: 120_000 }, () => {
  /** acme's URL and PAGE threats over six days, mirrored whole, then narrowed to URL. */
  async function narrowedToUrl(): Promise<{ service: Standin; dbPath: string; pages: StandinThreat[] }> {
    const first = addDays(TODAY, -6);
    const threats = Array.from({ length: 6 }, (_, index) =>
      threatsOfDay(addDays(first, index), 500_000 + index * 1000, 6).map((threat, position) => (position % 2 === 0 ? threat : { ...threat, type: 'PAGE' })),
    ).flat();
    const service = await serveThreats(KEY, NOW, threats);
    const dbPath = tempDbPath();
    expect((await runCli(['--backfill', '--from', first], env(service, dbPath))).code).toBe(0);
    expect((await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_ASSET_TYPES: 'URL' }))).code).toBe(0);
    expect(currentThreats(dbPath).every((threat) => threat.type === 'URL')).toBe(true);
    return { service, dbPath, pages: threats.filter((threat) => threat.type === 'PAGE') };
  }

  it('verify applies the configured scope and records it, so a later URL run hides every PAGE again and an unblocked PAGE never lingers', async () => {
    const { service, dbPath, pages } = await narrowedToUrl();
    // verify without the variable: every type, recorded as such, not PAGE rows shown under a URL scope.
    const verified = await runCli(['verify'], env(service, dbPath));
    expect(verified.code).toBe(0);
    const recorded = withDb(dbPath, (db) => db.prepare("SELECT asset_types FROM sync_status WHERE organization = 'acme'").pluck().get());

    const unblocked = pages[3] as StandinThreat;
    service.removeThreats([unblocked.id]);
    expect((await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_ASSET_TYPES: 'URL' }))).code).toBe(0);
    expect(currentThreats(dbPath)).toEqual(listed(service, KEY).filter((threat) => threat.type === 'URL'));
    const csv = await runCli(['export', '--format', 'csv'], { THREAT_MIRROR_DB: dbPath });
    expect(csv.code).toBe(0);
    for (const page of pages) expect(csv.stdout).not.toContain(page.content);
    expect(recorded).toBeNull();
  });

  it('never shows a type outside the recorded scope, even when the service sends one with a page', async () => {
    const { service, dbPath, pages } = await narrowedToUrl();
    const sent = pages[0] as StandinThreat;
    // A service that ignores assetType: a PAGE record appended to the first page of the URL walk.
    const record = JSON.stringify({ id: sent.id, content: sent.content, type: sent.type, blockedAt: sent.blockedAt });
    service.faults.enqueue({ kind: 'rawRecords', records: [record] });
    expect((await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_ASSET_TYPES: 'URL' }))).code).toBe(0);
    expect(currentThreats(dbPath).map((threat) => threat.id)).not.toContain(sent.id);
    expect(withDb(dbPath, (db) => db.prepare("SELECT out_of_scope FROM organization_threats WHERE organization = 'acme' AND threat_id = ?").pluck().get(sent.id))).toBe(1);
  });
});
