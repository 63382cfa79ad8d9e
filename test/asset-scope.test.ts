// Mirrors scoped by asset type (issue 30): THREAT_MIRROR_ASSET_TYPES and _<NAME>, with the built CLI
// against the stand-in, which filters by `assetType` as the interface says.
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats, type Standin, type StandinThreat } from '../src/standin/index.js';
import type { RequestRecord } from '../src/standin/types.js';
import { runCli } from './support/cli.js';
import { mirroredThreats, scalar } from './support/mirror-db.js';
import { mirrorEnvFor, startTestStandin } from './support/service.js';
import { tempDbPath } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const FROM = addDays(TODAY, -59);
const ACME_KEY = 'acme-key-scope-41c7';
const GLOBEX_KEY = 'globex-key-scope-9e02';

function start(threats: StandinThreat[]): Promise<Standin> {
  return startTestStandin({ threats, keys: { organizationKeys: { [ACME_KEY]: 'acme', [GLOBEX_KEY]: 'globex' }, userKeys: {} }, now: () => new Date(NOW) });
}

const env = mirrorEnvFor({ acme: ACME_KEY, globex: GLOBEX_KEY }, NOW, { THREAT_MIRROR_RETRY_MIN_MS: '5', THREAT_MIRROR_RETRY_MAX_MS: '50', LOG_LEVEL: 'info' });

const dataset = (): StandinThreat[] =>
  generateThreats({ seed: 30, organizations: ['acme', 'globex'], count: 12_000, fromDay: FROM, toDay: TODAY, hostile: true });

/** What the service holds for a key over the backfill's days, of the given types, as the mirror should hold it. */
function expected(service: Standin, key: string, types: readonly string[]): Array<Pick<StandinThreat, 'id' | 'content' | 'type' | 'blockedAt'>> {
  return service
    .threatsVisibleTo(key)
    .filter((threat) => threat.blockedAt.slice(0, 10) >= FROM && types.includes(threat.type))
    .map(({ id, content, type, blockedAt }) => ({ id, content, type, blockedAt }));
}

const listRequests = (service: Standin, key: string): RequestRecord[] => service.stats.requests.filter((request) => request.key === key && request.path === '/threats/list');
const assetTypeOf = (request: RequestRecord): unknown => (request.body as { assetType?: unknown }).assetType;
/** Walks begun: requests for a window's first page (neither a cursor nor a content query). */
const walks = (requests: readonly RequestRecord[]): number =>
  requests.filter((request) => {
    const body = request.body as { next_page?: unknown; query?: unknown };
    return body.next_page === undefined && body.query === undefined;
  }).length;

describe('a scoped backfill', () => {
  it('mirrors exactly the service threats of the scope, every request carrying it, in about one request per 100 of them', async () => {
    const service = await start(dataset());
    const dbPath = tempDbPath();
    const scope = { acme: ['PAGE', 'URL'], globex: ['ADDRESS'] } as const;
    const result = await runCli(['--backfill', '--from', FROM], env(service, dbPath, { THREAT_MIRROR_ASSET_TYPES: 'URL,PAGE', THREAT_MIRROR_ASSET_TYPES_GLOBEX: 'ADDRESS' }));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    for (const [organization, key] of [['acme', ACME_KEY], ['globex', GLOBEX_KEY]] as const) {
      const want = expected(service, key, scope[organization]);
      const everyType = service.threatsVisibleTo(key).filter((threat) => threat.blockedAt.slice(0, 10) >= FROM).length;
      expect(want.length).toBeGreaterThan(1000);
      expect(want.length).toBeLessThan(everyType * 0.6);
      expect(mirroredThreats(dbPath, organization)).toEqual(want);
      const requests = listRequests(service, key);
      expect(requests.map(assetTypeOf).filter((types) => JSON.stringify(types) !== JSON.stringify(scope[organization]))).toEqual([]);
      expect(requests.length).toBeLessThanOrEqual(1.05 * Math.ceil(want.length / 100) + walks(requests));
    }
    expect(scalar(dbPath, "SELECT complete_through FROM sync_checkpoints WHERE organization = 'acme'")).toBe(addDays(TODAY, -1));
  });

  it('sends no assetType when unset: requests unchanged', async () => {
    const service = await start(dataset().slice(0, 500));
    const result = await runCli(['--backfill', '--from', addDays(TODAY, -6)], env(service, tempDbPath()));
    expect(result.code).toBe(0);
    const requests = listRequests(service, ACME_KEY);
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.filter((request) => assetTypeOf(request) !== undefined)).toEqual([]);
  });
});

describe('a scope set on a mirror of every type', () => {
  it('marks nothing removed: the stored threats of other types are no removal candidates of a scoped walk', async () => {
    const service = await start(dataset());
    const dbPath = tempDbPath();
    expect((await runCli(['--backfill', '--from', FROM], env(service, dbPath))).code).toBe(0);
    const before = scalar<number>(dbPath, "SELECT count(*) FROM organization_threats WHERE organization = 'acme'");
    const rescan = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_ASSET_TYPES: 'URL', THREAT_MIRROR_RECONCILE_DAYS: '0', THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '1000' }));
    expect(scalar(dbPath, 'SELECT count(*) FROM organization_threats WHERE removed_at IS NOT NULL')).toBe(0);
    expect(rescan.stderr).toBe('');
    expect(rescan.code).toBe(0);
    expect(scalar(dbPath, "SELECT count(*) FROM organization_threats WHERE organization = 'acme'")).toBe(before);
    expect(listRequests(service, ACME_KEY).filter((request) => (request.body as { query?: string }).query !== undefined)).toEqual([]);
  });
});

describe('THREAT_MIRROR_ASSET_TYPES on the command line', () => {
  it('exits 2 naming the variable for a malformed value, before touching the database', async () => {
    const service = await start([]);
    for (const [variable, raw] of [['THREAT_MIRROR_ASSET_TYPES', 'URL,,PAGE'], ['THREAT_MIRROR_ASSET_TYPES_GLOBEX', 'url']] as const) {
      const result = await runCli(['--once'], env(service, tempDbPath(), { [variable]: raw }));
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`${variable}: "${raw}"`);
    }
    expect(service.stats.requests).toHaveLength(0);
  });

  it('accepts a well-formed name the interface does not list, with a warning naming it', async () => {
    const service = await start(dataset().slice(0, 300));
    const result = await runCli(['--once'], env(service, tempDbPath(), { THREAT_MIRROR_ASSET_TYPES: 'URL,PLATFORM_99' }));
    expect(result.code).toBe(0);
    const warning = result.logs.find((line) => line.level === 40 && String(line.msg).includes('PLATFORM_99'));
    expect(warning?.msg).toMatch(/^THREAT_MIRROR_ASSET_TYPES: PLATFORM_99 not among the asset types/);
    expect(listRequests(service, ACME_KEY).every((request) => JSON.stringify(assetTypeOf(request)) === '["PLATFORM_99","URL"]')).toBe(true);
  });
});
