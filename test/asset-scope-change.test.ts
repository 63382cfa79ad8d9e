// A scope changed on a mirror (issue 30): widening fetches only the added types over the days
// already mirrored; narrowing hides the dropped types from every answer without removing them; a
// day's ledger digest is compared only with a walk of the same scope. Built CLI, stand-in, real file.
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats, type Standin, type StandinThreat } from '../src/standin/index.js';
import type { RequestRecord } from '../src/standin/types.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CliProcess, runCli, startCli } from './support/cli.js';
import { mirroredThreats, scalar, withDb } from './support/mirror-db.js';
import { type Env, mirrorEnvFor, startTestStandin } from './support/service.js';
import { tempDbPath, tempDir } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const FROM = addDays(TODAY, -59);
const KEY = 'acme-key-scope-change-3b8d';

async function start(): Promise<Standin> {
  const threats = generateThreats({ seed: 31, organizations: ['acme'], count: 8000, fromDay: FROM, toDay: TODAY, hostile: false });
  return startTestStandin({ threats, keys: { organizationKeys: { [KEY]: 'acme' }, userKeys: {} }, now: () => new Date(NOW) });
}

// The incremental range and the widening alone: no reconciliation's re-walks in the counts.
const mirrorEnv = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '0', LOG_LEVEL: 'info' });
/** The mirror scoped to `assetTypes`. */
const env = (service: Standin, dbPath: string, assetTypes: string, extra: Env = {}): Env => mirrorEnv(service, dbPath, { THREAT_MIRROR_ASSET_TYPES: assetTypes, ...extra });

const ofTypes = (service: Standin, types: readonly string[]): Array<Pick<StandinThreat, 'id' | 'content' | 'type' | 'blockedAt'>> =>
  service
    .threatsVisibleTo(KEY)
    .filter((threat) => types.includes(threat.type))
    .map(({ id, content, type, blockedAt }) => ({ id, content, type, blockedAt }));
const byAssetType = (requests: readonly RequestRecord[]): Map<string, RequestRecord[]> => {
  const groups = new Map<string, RequestRecord[]>();
  for (const request of requests) {
    const types = JSON.stringify((request.body as { assetType?: unknown }).assetType ?? null);
    groups.set(types, [...(groups.get(types) ?? []), request]);
  }
  return groups;
};
const firstPages = (requests: readonly RequestRecord[]): number => requests.filter((request) => (request.body as { next_page?: unknown }).next_page === undefined).length;

describe('widening the scope', () => {
  it('fetches only the added type over the days already mirrored, and the other types are not walked again', async () => {
    const service = await start();
    const dbPath = tempDbPath();
    expect((await runCli(['--backfill', '--from', FROM], env(service, dbPath, 'URL'))).code).toBe(0);
    expect(mirroredThreats(dbPath, 'acme')).toEqual(ofTypes(service, ['URL']));
    service.stats.reset();
    const widened = await runCli(['--once'], env(service, dbPath, 'URL,ADDRESS'));
    expect(widened.stderr).toBe('');
    expect(widened.code).toBe(0);
    const groups = byAssetType(service.stats.requests);
    // The added type over every mirrored day; the new scope over the incremental range only (3 days: one window, one page or two).
    expect([...groups.keys()].sort()).toEqual(['["ADDRESS","URL"]', '["ADDRESS"]']);
    const addresses = ofTypes(service, ['ADDRESS']).length;
    const wideningRequests = groups.get('["ADDRESS"]') ?? [];
    expect(wideningRequests.length).toBeLessThanOrEqual(1.05 * Math.ceil(addresses / 100) + firstPages(wideningRequests));
    expect(new Set(wideningRequests.map((request) => (request.body as { startDate: string }).startDate)).has(FROM)).toBe(true);
    expect((groups.get('["ADDRESS","URL"]') ?? []).length).toBeLessThanOrEqual(4);
    expect(mirroredThreats(dbPath, 'acme')).toEqual(ofTypes(service, ['ADDRESS', 'URL']));
    expect(scalar(dbPath, 'SELECT count(*) FROM sync_plans')).toBe(0);
    // Nothing left to widen: the next run walks its incremental range alone.
    service.stats.reset();
    expect((await runCli(['--once'], env(service, dbPath, 'URL,ADDRESS'))).code).toBe(0);
    expect([...byAssetType(service.stats.requests).keys()]).toEqual(['["ADDRESS","URL"]']);
    const status = await runCli(['status', '--json'], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW });
    expect((JSON.parse(status.stdout) as { organizations: Array<{ assetTypes: string[] }> }).organizations[0]?.assetTypes).toEqual(['ADDRESS', 'URL']);
    expect(scalar(dbPath, "SELECT asset_types FROM sync_status WHERE organization = 'acme'")).toBe('ADDRESS,URL');
  });
});

describe('a widening stopped midway', () => {
  const onlyAddresses = (requests: readonly RequestRecord[]): RequestRecord[] => byAssetType(requests).get('["ADDRESS"]') ?? [];

  /** A URL mirror widened to URL,ADDRESS, killed once about a third of the widening's requests have arrived. */
  async function killedMidWidening(): Promise<{ service: Standin; dbPath: string; firstRun: RequestRecord[]; addresses: number }> {
    const service = await start();
    const dbPath = tempDbPath();
    expect((await runCli(['--backfill', '--from', FROM], env(service, dbPath, 'URL'))).code).toBe(0);
    const arrived = service.stats.requests.length;
    service.stats.reset();
    const addresses = ofTypes(service, ['ADDRESS']).length;
    // Slow enough that the two thirds left take over half a second: the kill lands mid-widening on a loaded machine too.
    service.setLatency(100);
    const widening = startCli(['--once'], env(service, dbPath, 'URL,ADDRESS', { THREAT_MIRROR_CONCURRENCY: '2' }));
    // The incremental range first (a few requests), then the added type over 60 days.
    await service.waitForRequests(arrived + 4 + Math.ceil(addresses / 300));
    widening.kill('SIGKILL');
    expect((await widening.exited).signal).toBe('SIGKILL');
    // The requests it left in flight are answered (and recorded) before the counts start again.
    await service.waitUntilIdle();
    service.setLatency(0);
    const firstRun = [...service.stats.requests];
    service.stats.reset();
    expect(scalar(dbPath, 'SELECT count(*) FROM sync_plans WHERE widening IS NOT NULL')).toBe(1);
    return { service, dbPath, firstRun, addresses };
  }

  it('resumes where it stopped: windows it finished are not asked for again, and the mirror ends exact', async () => {
    const { service, dbPath, firstRun, addresses } = await killedMidWidening();
    const committed = withDb(dbPath, (db) =>
      db
        .prepare(
          `SELECT c.window_start || '..' || c.window_end AS window, c.next_page AS cursor, c.completed_at IS NOT NULL AS completed
             FROM sync_cursors c JOIN sync_plans p ON p.id = c.plan_id WHERE p.widening IS NOT NULL`,
        )
        .all(),
    ) as Array<{ window: string; cursor: string | null; completed: number }>;
    expect(committed.some((window) => window.completed)).toBe(true);
    // status names the unfinished walk for what it is.
    const status = await runCli(['status'], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW });
    expect(status.stdout).toMatch(new RegExp(`^  \\w+ backfill of the added types ADDRESS ${FROM}\\.\\.${TODAY}: .*windows open$`, 'm'));
    const json = JSON.parse((await runCli(['status', '--json'], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW })).stdout) as { organizations: Array<{ openPlans: Array<{ mode: string; widening: string | null }> }> };
    expect(json.organizations[0]?.openPlans).toEqual([expect.objectContaining({ mode: 'backfill', widening: 'ADDRESS' })]);
    // An address's miss is not vouched for while older days may lack ADDRESS threats (the scope was recorded at once).
    const unlisted = '0x0000000000000000000000000000000000dead01';
    const midway = await runCli(['lookup', unlisted], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW });
    expect(midway.code, midway.stdout).toBe(3);
    expect(midway.stdout).toContain('organization "acme" is still walking its mirrored days for the types its scope added (ADDRESS): older ones may be missing');
    const resumed = await runCli(['--once'], env(service, dbPath, 'URL,ADDRESS', { THREAT_MIRROR_CONCURRENCY: '2' }));
    expect(resumed.code).toBe(0);
    expect((await runCli(['lookup', unlisted], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW })).code).toBe(1);
    expect(mirroredThreats(dbPath, 'acme')).toEqual(ofTypes(service, ['ADDRESS', 'URL']));
    expect(scalar(dbPath, 'SELECT count(*) FROM sync_plans')).toBe(0);
    // Both runs together cost about what one widening costs: at most the pages in flight or
    // prefetched when it was killed (2 windows at once, a page ahead each) are asked for twice.
    const before = onlyAddresses(firstRun);
    const after = onlyAddresses(service.stats.requests);
    expect(before.length).toBeGreaterThan(0);
    // What the killed run committed: windows walked to the end are not asked for again; a window
    // with a stored cursor N goes on from it, after reading page N-1 again (the check that the list
    // did not shift), never from further back.
    const windowOf = (request: RequestRecord): string => `${(request.body as { startDate: string }).startDate}..${(request.body as { endDate: string }).endDate}`;
    const pageOf = (request: RequestRecord): number => Number((request.body as { next_page?: string }).next_page ?? 1);
    for (const { window, cursor, completed } of committed) {
      const asked = after.filter((request) => windowOf(request) === window).map(pageOf);
      if (completed) expect(asked, window).toEqual([]);
      else if (cursor !== null && asked.length > 0) expect(Math.min(...asked), window).toBe(Number(cursor) - 1);
    }
    expect(before.length + after.length).toBeLessThanOrEqual(1.05 * Math.ceil(addresses / 100) + firstPages([...before, ...after]) + 4);
  });

  it('still walks the types it left when the scope changes before it resumes', async () => {
    const { service, dbPath } = await killedMidWidening();
    const changed = await runCli(['--once'], env(service, dbPath, 'URL,ADDRESS,EMAIL'));
    expect(changed.code).toBe(0);
    expect(mirroredThreats(dbPath, 'acme')).toEqual(ofTypes(service, ['ADDRESS', 'EMAIL', 'URL']));
    expect(scalar(dbPath, 'SELECT count(*) FROM sync_plans')).toBe(0);
    // URL was not walked again over the mirrored days: every request over them asked for the added types only.
    const oldDays = service.stats.requests.filter((request) => (request.body as { endDate: string }).endDate < addDays(TODAY, -3));
    expect(new Set(oldDays.map((request) => JSON.stringify((request.body as { assetType?: string[] }).assetType)))).toEqual(new Set(['["ADDRESS","EMAIL"]']));
  });
});

describe('a window left midway, then the scope changes', () => {
  it.each([
    ['narrowed', undefined, 'URL'],
    ['widened', 'URL', 'URL,ADDRESS'],
  ])('%s: the window is walked again from its first page, never from a cursor another scope made, and the mirror ends exact', async (_, before, after) => {
    // About 800 threats a day: a day is 8 pages or more, 3 or more of one type.
    const threats = generateThreats({ seed: 32, organizations: ['acme'], count: 48_000, fromDay: FROM, toDay: TODAY, hostile: false });
    const service = await startTestStandin({ threats, keys: { organizationKeys: { [KEY]: 'acme' }, userKeys: {} }, now: () => new Date(NOW) });
    const dbPath = tempDbPath();
    // The history walk with 2 requests a run: the newest day before the first 10 is left at its third page.
    const history = { THREAT_MIRROR_INITIAL_DAYS: '10', THREAT_MIRROR_HISTORY_FROM: FROM, THREAT_MIRROR_HISTORY_MAX_REQUESTS: '2' };
    const scoped = (types: string | undefined): Env => (types === undefined ? mirrorEnv(service, dbPath, history) : env(service, dbPath, types, history));
    expect((await runCli(['--once'], scoped(before))).code).toBe(0);
    const cursors = withDb(dbPath, (db) => db.prepare('SELECT window_start AS windowStart, window_end AS windowEnd, next_page AS nextPage FROM sync_cursors WHERE completed_at IS NULL AND next_page IS NOT NULL').all()) as Array<{
      windowStart: string;
      windowEnd: string;
      nextPage: string;
    }>;
    expect(cursors.length).toBeGreaterThan(0);
    expect(Math.max(...cursors.map((cursor) => Number(cursor.nextPage)))).toBeGreaterThanOrEqual(3);
    service.stats.reset();
    expect((await runCli(['--once'], scoped(after))).code).toBe(0);
    // Each window left midway: its first request under the new scope is its first page (before: page N-1 with the old scope's cursor N).
    for (const { windowStart, windowEnd } of cursors) {
      const asked = service.stats.requests.filter((request) => {
        const body = request.body as { startDate: string; endDate: string };
        return body.startDate === windowStart && body.endDate === windowEnd;
      });
      expect(asked.length, `${windowStart}..${windowEnd}`).toBeGreaterThan(0);
      expect((asked[0]?.body as { next_page?: string }).next_page, `${windowStart}..${windowEnd}`).toBeUndefined();
    }
    // Walked to its start, the history holds exactly the new scope's threats.
    for (let run = 0; scalar(dbPath, "SELECT history_from FROM sync_status WHERE organization = 'acme'") !== FROM; run += 1) {
      expect(run).toBeLessThan(60);
      expect((await runCli(['--once'], env(service, dbPath, after, { ...history, THREAT_MIRROR_HISTORY_MAX_REQUESTS: '200' }))).code).toBe(0);
    }
    const current = withDb(dbPath, (db) => db.prepare("SELECT id, content, type, blocked_at AS blockedAt FROM current_threats WHERE organization = 'acme' ORDER BY id").all());
    expect(current).toEqual(ofTypes(service, after.split(',')));
  });
});

describe('narrowing the scope', () => {
  it('hides the dropped type from current_threats, lookup and exports without removed_at, and widening again shows it', async () => {
    const service = await start();
    const dbPath = tempDbPath();
    expect((await runCli(['--backfill', '--from', FROM], env(service, dbPath, 'URL,PAGE'))).code).toBe(0);
    const pages = ofTypes(service, ['PAGE']);
    const page = pages.find((threat) => threat.blockedAt.slice(0, 10) < addDays(TODAY, -5)) as StandinThreat;
    expect(pages.length).toBeGreaterThan(100);
    expect((await runCli(['lookup', page.content], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW })).code).toBe(0);
    const feedBefore = scalar<number>(dbPath, 'SELECT max(change_seq) FROM threats');

    const narrowed = await runCli(['--once'], env(service, dbPath, 'URL'));
    expect(narrowed.code).toBe(0);
    expect(scalar(dbPath, "SELECT count(*) FROM current_threats WHERE type = 'PAGE'")).toBe(0);
    expect(scalar(dbPath, 'SELECT count(*) FROM current_threats')).toBe(ofTypes(service, ['URL']).length);
    // Not unblocked: no removed_at, rows kept, marked out of scope.
    expect(scalar(dbPath, 'SELECT count(*) FROM organization_threats WHERE removed_at IS NOT NULL')).toBe(0);
    expect(scalar(dbPath, "SELECT count(*) FROM organization_threats o JOIN threats t ON t.id = o.threat_id WHERE t.type = 'PAGE' AND o.out_of_scope = 1")).toBe(pages.length);
    // The change feed moves them (exports and the zone follow it), as changed rows, never as removals.
    expect(scalar(dbPath, "SELECT count(*) FROM threats WHERE type = 'PAGE' AND change_seq > ?", feedBefore)).toBe(pages.length);
    // Not blocked, and not vouched for either: the mirror holds no PAGE threat now, and one would match it.
    const hidden = await runCli(['lookup', page.content], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW });
    expect(hidden.code).toBe(3);
    expect(hidden.stdout).toContain('mirrors only URL (THREAT_MIRROR_ASSET_TYPES): PAGE threats would match it');
    const csv = await runCli(['export', '--format', 'csv'], { THREAT_MIRROR_DB: dbPath });
    expect(csv.code).toBe(0);
    const exported = new Set(csv.stdout.trim().split('\n').slice(1).map((line) => Number(line.slice(0, line.indexOf(',')))));
    expect(exported.has(page.id)).toBe(false);
    expect(exported.size).toBe(ofTypes(service, ['URL']).length);

    // Widening back: shown at once, and PAGE walked again over the mirrored days (it may have changed meanwhile).
    service.stats.reset();
    expect((await runCli(['--once'], env(service, dbPath, 'URL,PAGE'))).code).toBe(0);
    expect(byAssetType(service.stats.requests).has('["PAGE"]')).toBe(true);
    expect(scalar(dbPath, "SELECT count(*) FROM current_threats WHERE type = 'PAGE'")).toBe(pages.length);
    expect((await runCli(['lookup', page.content], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW })).code).toBe(0);
  });
});

describe('the ledger under a scope', () => {
  it('records the scope of each walk, and verify compares a day only with a digest of the same scope', async () => {
    const service = await start();
    const dbPath = tempDbPath();
    expect((await runCli(['--backfill', '--from', FROM], env(service, dbPath, 'URL,PAGE'))).code).toBe(0);
    expect(scalar(dbPath, "SELECT count(*) FROM sync_windows WHERE asset_types IS NOT 'PAGE,URL'")).toBe(0);
    expect((await runCli(['--once'], env(service, dbPath, 'URL'))).code).toBe(0);
    const days = withDb(dbPath, (db) => db.prepare('SELECT asset_types AS assetTypes, count(*) AS days FROM sync_windows GROUP BY asset_types ORDER BY 1').all());
    // The incremental range was walked under the new scope; the older days keep the old one's digests.
    expect(days).toEqual([
      { assetTypes: 'PAGE,URL', days: 57 },
      { assetTypes: 'URL', days: 3 },
    ]);
    // Old days: their ledger digests hold PAGE too, the walk under URL alone cannot match them, and is no drift.
    const verify = await runCli(['verify', '--from', addDays(TODAY, -20), '--to', addDays(TODAY, -10)], env(service, dbPath, 'URL'));
    expect(verify.code).toBe(0);
    expect(verify.stdout).toContain('11 days');
    expect(verify.stdout).toContain('0 drifted');
    expect(scalar(dbPath, "SELECT count(*) FROM sync_windows WHERE asset_types = 'URL'")).toBe(14);
  });
});

describe('narrowing, seen by the daemon', () => {
  it('drops the hidden type from the export files and the zone the export index feeds, after the next run', async () => {
    const threats: StandinThreat[] = [
      { id: 5_000_001, content: 'https://url-host.com/', type: 'URL', blockedAt: `${TODAY}T09:00:00.000Z`, organization: 'acme' },
      { id: 5_000_002, content: 'https://page-host.com/', type: 'PAGE', blockedAt: `${TODAY}T09:30:00.000Z`, organization: 'acme' },
    ];
    const service = await startTestStandin({ threats, keys: { organizationKeys: { [KEY]: 'acme' }, userKeys: {} }, now: () => new Date(NOW) });
    const dir = tempDir();
    const [hosts, rpz] = [join(dir, 'hosts.txt'), join(dir, 'threats.rpz')];
    const daemonEnv = (assetTypes: string): Record<string, string> =>
      env(service, join(dir, 'mirror.db'), assetTypes, { THREAT_MIRROR_SCHEDULE: '0 0 1 1 *', THREAT_MIRROR_EXPORTS: `hosts=${hosts},rpz=${rpz}`, THREAT_MIRROR_INITIAL_DAYS: '3' });
    const written = (daemon: CliProcess): Promise<unknown> =>
      daemon.waitForLog(() => daemon.logs.filter((line) => line.msg === 'export written').length >= 2);
    const first = startCli([], daemonEnv('URL,PAGE'));
    await written(first);
    expect(readFileSync(hosts, 'utf8')).toContain('page-host.com');
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);

    const second = startCli([], daemonEnv('URL'));
    await second.waitForLog((line) => String(line.msg).startsWith('sync of organization') && line.status === 'succeeded');
    // Each file once the export job has rewritten it after the run (within the test's timeout; it never is on the old code).
    await second.waitForLog(() => ![hosts, rpz].some((file) => readFileSync(file, 'utf8').includes('page-host.com')));
    expect(readFileSync(hosts, 'utf8')).toContain('url-host.com');
    expect(readFileSync(rpz, 'utf8')).not.toContain('page-host.com');
    expect(readFileSync(rpz, 'utf8')).toContain('url-host.com');
    second.child.kill('SIGTERM');
    await second.exited;
  });
});

describe('a hidden threat whose type changes into the scope', () => {
  it('is shown again by the walk that returns it', async () => {
    const service = await start();
    const dbPath = tempDbPath();
    expect((await runCli(['--backfill', '--from', FROM], env(service, dbPath, 'URL,PAGE'))).code).toBe(0);
    expect((await runCli(['--once'], env(service, dbPath, 'URL'))).code).toBe(0);
    const page = ofTypes(service, ['PAGE']).find((threat) => threat.blockedAt.slice(0, 10) >= addDays(TODAY, -2)) as StandinThreat;
    expect(scalar(dbPath, 'SELECT count(*) FROM current_threats WHERE id = ?', page.id)).toBe(0);
    service.updateThreat(page.id, { type: 'URL' });
    expect((await runCli(['--once'], env(service, dbPath, 'URL'))).code).toBe(0);
    expect(scalar(dbPath, 'SELECT type FROM current_threats WHERE id = ?', page.id)).toBe('URL');
    expect(scalar(dbPath, 'SELECT removed_at IS NULL AND out_of_scope = 0 FROM organization_threats WHERE threat_id = ?', page.id)).toBe(1);
  });
});
