// An organization left out of the configuration (THREAT_MIRROR_ORG / THREAT_MIRROR_ORGS): no walk
// of it looks at its threats again, so the file must stop answering for them. Before, they stayed
// in force: lookup said "blocked for globex", every export and the zone kept them, the service's
// removals never arrived, and status and a lookup without --org judged an organization no run
// would ever sync (stale, so "unknown" for every value, 20 minutes on). Now a writer retires it at
// its start: hidden from every answer (through in_force), kept, moved in the change feed, left out
// of sync_status, and shown again when a writer configures it again, its runs going on from its
// checkpoints; a reader still configured with it cannot vouch for it. With the built CLI against
// the stand-in.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { StandinThreat } from '../src/standin/index.js';
import { runCli, servingPort, startCli } from './support/cli.js';
import { scalar, withDb } from './support/mirror-db.js';
import { EVERY_SECOND_DAEMON, mirrorEnvFor, startTestStandin } from './support/service.js';
import { tempDbPath } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';
const DAY = '2026-03-14';
const ACME_KEY = 'acme-key-retire-5b1d';
const GLOBEX_KEY = 'globex-key-retire-77e0';
const ACME_URL = 'https://acme-phish-retire.com/';
const GLOBEX_URL = 'https://globex-phish-retire.com/';
const GLOBEX_ADDRESS = 'ethereum:0x52908400098527886E0F7030069857D2E4169EE7';

const threats: StandinThreat[] = [
  { id: 1, content: ACME_URL, type: 'URL', blockedAt: `${DAY}T09:00:00.000Z`, organization: 'acme' },
  { id: 2, content: GLOBEX_URL, type: 'URL', blockedAt: `${DAY}T10:00:00.000Z`, organization: 'globex' },
  { id: 3, content: GLOBEX_ADDRESS, type: 'ADDRESS', blockedAt: `${DAY}T11:00:00.000Z`, organization: 'globex' },
];

const settings = { THREAT_MIRROR_INITIAL_DAYS: '5', THREAT_MIRROR_RETRY_MIN_MS: '5', THREAT_MIRROR_RETRY_MAX_MS: '20' };
const both = mirrorEnvFor({ acme: ACME_KEY, globex: GLOBEX_KEY }, NOW, settings);
const acmeOnly = mirrorEnvFor({ acme: ACME_KEY }, NOW, settings);

async function mirrorOfTwo(): Promise<{ service: Awaited<ReturnType<typeof startTestStandin>>; dbPath: string }> {
  const service = await startTestStandin({ threats, keys: { organizationKeys: { [ACME_KEY]: 'acme', [GLOBEX_KEY]: 'globex' }, userKeys: {} }, now: () => new Date(NOW) });
  const dbPath = tempDbPath();
  expect((await runCli(['--once'], both(service, dbPath))).code).toBe(0);
  return { service, dbPath };
}

/** A reader with the file alone (no organization configured): it asks about every organization the file answers for. */
const readerOf = (dbPath: string): Record<string, string> => ({ THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW });
const inForce = (dbPath: string): string[] =>
  withDb(dbPath, (db) => db.prepare("SELECT organization || ':' || threat_id FROM in_force ORDER BY 1").pluck().all() as string[]);
const globexRequests = (service: Awaited<ReturnType<typeof startTestStandin>>): number =>
  service.stats.requests.filter((request) => request.key === GLOBEX_KEY && request.path === '/threats/list').length;

describe('an organization left out of the configuration', () => {
  it('is retired by the next writer: its threats hidden from lookup, exports and sync_status, moved in the change feed, kept', async () => {
    const { service, dbPath } = await mirrorOfTwo();
    expect(inForce(dbPath)).toEqual(['acme:1', 'globex:2', 'globex:3']);
    const feedBefore = scalar<number>(dbPath, 'SELECT max(change_seq) FROM threats');

    const run = await runCli(['--once'], acmeOnly(service, dbPath));
    expect(run.code).toBe(0);
    expect(run.logs.find((line) => line.organization === 'globex' && line.level === 40)).toMatchObject({ hidden: 2, msg: expect.stringContaining('no longer configured') });
    expect(inForce(dbPath)).toEqual(['acme:1']);
    // Kept, not removed: configured again, nothing needs walking again.
    expect(scalar(dbPath, "SELECT count(*) FROM organization_threats WHERE organization = 'globex' AND removed_at IS NULL")).toBe(2);
    // A reader of the change feed sees both leave.
    expect(withDb(dbPath, (db) => db.prepare('SELECT id FROM threats WHERE change_seq > ? ORDER BY id').pluck().all(feedBefore))).toEqual([2, 3]);
    expect(withDb(dbPath, (db) => db.prepare('SELECT organization FROM sync_status').pluck().all())).toEqual(['acme']);

    // A reader with the file alone: globex's threat is not blocked, and acme alone is judged.
    const lookup = await runCli(['lookup', GLOBEX_URL], readerOf(dbPath));
    expect(lookup.stdout).toContain('not blocked');
    expect(lookup.code).toBe(1);
    const status = await runCli(['status'], readerOf(dbPath));
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^globex: no longer configured since \S+; its 2 threats are hidden from every answer/m);
    expect(status.stdout).not.toMatch(/^globex$/m);
    const hosts = await runCli(['export', '--format', 'hosts'], readerOf(dbPath));
    expect(hosts.stdout).toContain('acme-phish-retire.com');
    expect(hosts.stdout).not.toContain('globex-phish-retire.com');
    // A reader still configured with it: never "not blocked" for it (its threats are hidden), but
    // "cannot vouch", at once, not only once its last run is old enough to be stale.
    const configured = await runCli(['lookup', GLOBEX_URL], both(service, dbPath));
    expect(configured.stdout).toMatch(/cannot vouch.*organization "globex" is no longer configured/s);
    expect(configured.code).toBe(3);
    // Asked about by name: a usage error that says what to fix, never an empty list or "not blocked".
    for (const args of [['lookup', '--org', 'globex', GLOBEX_URL], ['export', '--format', 'hosts', '--org', 'globex']]) {
      const refused = await runCli(args, readerOf(dbPath));
      expect(refused.stderr, args.join(' ')).toMatch(/--org: organization "globex" is no longer configured .*configure it again \(THREAT_MIRROR_ORGS\)/);
      expect(refused.code, args.join(' ')).toBe(2);
    }
    // The snapshot's manifest lists what the copy answers for.
    const snapshot = await runCli(['snapshot', '--out', `${dbPath}.snapshot`], readerOf(dbPath));
    expect(snapshot.code).toBe(0);
    const manifest = JSON.parse(readFileSync(`${dbPath}.snapshot.json`, 'utf8')) as { organizations: Array<{ organization: string }> };
    expect(manifest.organizations.map((entry) => entry.organization)).toEqual(['acme']);
  });

  it('is shown again when configured again, by its recorded scope, its runs going on from its checkpoint', async () => {
    const service = await startTestStandin({ threats, keys: { organizationKeys: { [ACME_KEY]: 'acme', [GLOBEX_KEY]: 'globex' }, userKeys: {} }, now: () => new Date(NOW) });
    const dbPath = tempDbPath();
    const scoped = { THREAT_MIRROR_ASSET_TYPES_GLOBEX: 'URL' };
    expect((await runCli(['--once'], both(service, dbPath, scoped))).code).toBe(0);
    expect(inForce(dbPath)).toEqual(['acme:1', 'globex:2']);
    expect((await runCli(['--once'], acmeOnly(service, dbPath))).code).toBe(0);
    expect(inForce(dbPath)).toEqual(['acme:1']);

    const requestsBefore = globexRequests(service);
    const back = await runCli(['--once'], both(service, dbPath, scoped));
    expect(back.code).toBe(0);
    expect(back.logs.find((line) => line.organization === 'globex' && typeof line.shown === 'number')).toMatchObject({ shown: 1, msg: expect.stringContaining('configured again') });
    // The scope still hides the address: shown by what is recorded of it, not every link.
    expect(inForce(dbPath)).toEqual(['acme:1', 'globex:2']);
    expect(withDb(dbPath, (db) => db.prepare('SELECT organization FROM sync_status ORDER BY 1').pluck().all())).toEqual(['acme', 'globex']);
    expect(scalar(dbPath, "SELECT retired_at FROM organization_scopes WHERE organization = 'globex'")).toBeNull();
    // An incremental run from its checkpoint (one page), not its history walked again.
    expect(globexRequests(service) - requestsBefore).toBe(1);
    const lookup = await runCli(['lookup', GLOBEX_URL], readerOf(dbPath));
    expect(lookup.stdout).toContain('for globex');
    expect(lookup.code).toBe(0);
  });

  it('is not retired by a command that selects one organization with --org: the configuration still names it', async () => {
    const { service, dbPath } = await mirrorOfTwo();
    const run = await runCli(['--backfill', '--org', 'acme', '--from', '2026-03-01'], both(service, dbPath));
    expect(run.code).toBe(0);
    expect(inForce(dbPath)).toEqual(['acme:1', 'globex:2', 'globex:3']);
    expect(scalar(dbPath, "SELECT count(*) FROM organization_scopes WHERE retired_at IS NOT NULL")).toBe(0);
  });

  it('answers 404 for its feed from a daemon that does not configure it, and the daemon serves the rest', async () => {
    const { service, dbPath } = await mirrorOfTwo();
    const daemon = startCli([], acmeOnly(service, dbPath, EVERY_SECOND_DAEMON));
    const port = await servingPort(daemon);
    await daemon.waitForLog((line) => line.msg === 'sync of organization "acme" succeeded');
    const retired = await fetch(`http://127.0.0.1:${port}/v1/exports/hosts?org=globex`);
    expect(retired.status).toBe(404);
    expect(((await retired.json()) as { error: string }).error).toMatch(/organization "globex" is no longer configured/);
    const feed = await (await fetch(`http://127.0.0.1:${port}/v1/exports/hosts`)).text();
    expect(feed).toContain('acme-phish-retire.com');
    expect(feed).not.toContain('globex-phish-retire.com');
    const lookup = (await (await fetch(`http://127.0.0.1:${port}/v1/lookup?value=${encodeURIComponent(GLOBEX_URL)}`)).json()) as { results: Array<{ verdict: string }> };
    expect(lookup.results.map((result) => result.verdict)).toEqual(['not_blocked']);
    daemon.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  });
});
