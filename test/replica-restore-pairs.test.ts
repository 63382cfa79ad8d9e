// A pod restored from a replica (THREAT_MIRROR_RESTORE_FROM) meets the other features, pair by
// pair: the replica and the pod's configuration disagree on the organizations, the asset type
// scope or the allowlist, and the pod's first run (`--once`, the built CLI) must leave a file that
// answers for the pod's configuration, not the primary's. Three primaries (two organizations; one
// alone; one alone scoped to URL,PAGE) are mirrored once and replicated to files by the real
// Litestream 0.3.13 before the tests, which then restore fresh pods from them. The stand-in's
// data never changes, so the pods compare with it as exact-records tests do.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats, type Standin, type StandinThreat, startStandin } from '../src/standin/index.js';
import type { RequestRecord } from '../src/standin/types.js';
import { type CliResult, runCli } from './support/cli.js';
import { skipFor } from './support/judges.js';
import { LITESTREAM, LITESTREAM_MISSING as missing, startReplicating } from './support/litestream.js';
import { scalar, withDb } from './support/mirror-db.js';
import { type Env, mirrorEnvFor } from './support/service.js';
import { tempDbPath, tempDir } from './support/temp.js';


const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const DAYS = 12;
const FIRST_DAY = addDays(TODAY, -(DAYS - 1));
/** A day the pods do not re-scan: what they hold of it came with the file. */
const RESTORED_DAY = addDays(TODAY, -6);
const ACME_KEY = 'acme-key-restore-pairs-4c1e';
const GLOBEX_KEY = 'globex-key-restore-pairs-9a07';

/** Threats the pairs look up, each on a day only the replica brings. */
const GLOBEX_URL = 'https://globex-only-restore-pairs.com/';
const ACME_ADDRESS = 'eip155:1:0x7a16ff8270133f063aab6c9977183d9e72835428';
/** The same address as a wallet asks about it: bare (any chain), in its checksum case. */
const ACME_ADDRESS_ASKED = '0x7A16fF8270133F063aAb6C9977183D9e72835428';
const ALLOWED_URL = 'https://allowed-by-the-pod-restore-pairs.com/';
const PRIMARY_ALLOWED_URL = 'https://allowed-by-the-primary-restore-pairs.com/';
const named: StandinThreat[] = [
  { id: 9_000_001, content: GLOBEX_URL, type: 'URL', blockedAt: `${RESTORED_DAY}T08:00:00.000Z`, organization: 'globex' },
  { id: 9_000_002, content: ACME_ADDRESS, type: 'ADDRESS', blockedAt: `${RESTORED_DAY}T09:00:00.000Z`, organization: 'acme' },
  { id: 9_000_003, content: ALLOWED_URL, type: 'URL', blockedAt: `${RESTORED_DAY}T10:00:00.000Z`, organization: 'acme' },
  { id: 9_000_004, content: PRIMARY_ALLOWED_URL, type: 'URL', blockedAt: `${RESTORED_DAY}T11:00:00.000Z`, organization: 'acme' },
];
const threats: StandinThreat[] = [
  ...generateThreats({ seed: 4107, organizations: ['acme'], count: 500, fromDay: FIRST_DAY, toDay: TODAY }),
  ...generateThreats({ seed: 4108, organizations: ['globex'], count: 250, fromDay: FIRST_DAY, toDay: TODAY, firstId: 5_000_000 }),
  ...named,
];

const settings: Env = { THREAT_MIRROR_INITIAL_DAYS: String(DAYS), THREAT_MIRROR_RETRY_MIN_MS: '5', THREAT_MIRROR_RETRY_MAX_MS: '20' };
const acmeOnly = mirrorEnvFor({ acme: ACME_KEY }, NOW, settings);
const both = mirrorEnvFor({ acme: ACME_KEY, globex: GLOBEX_KEY }, NOW, settings);

type Listed = Pick<StandinThreat, 'id' | 'content' | 'type' | 'blockedAt'>;
const KEYS: Readonly<Record<string, string>> = { acme: ACME_KEY, globex: GLOBEX_KEY };

/** What the service lists for `organization`, of `types` (every type when left out), as the mirror should hold it. */
function listed(organization: string, types?: readonly string[]): Listed[] {
  return service
    .threatsVisibleTo(KEYS[organization] as string)
    .filter((threat) => types === undefined || types.includes(threat.type))
    .map(({ id, content, type, blockedAt }) => ({ id, content, type, blockedAt }))
    .sort((a, b) => a.id - b.id);
}

/** What the mirror answers for `organization` now (current_threats: in force, in scope, not retired). */
function current(dbPath: string, organization: string): Listed[] {
  return withDb(
    dbPath,
    (db) =>
      db
        .prepare('SELECT t.id, t.content, t.type, t.blocked_at AS blockedAt FROM current_threats c JOIN threats t ON t.id = c.id WHERE c.organization = ? ORDER BY t.id')
        .all(organization) as Listed[],
  );
}

const listRequests = (since: number, key: string): RequestRecord[] => service.stats.requests.slice(since).filter((request) => request.key === key && request.path === '/threats/list');
const restoredLog = (run: CliResult): unknown => run.logs.find((line) => line.msg === 'restored the database from its replica; the runs go on from its checkpoints');
const readerOf = (dbPath: string): Env => ({ THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW });

/** A pod's first run: a new file restored from `replica`, then `--once`; `since`: where its requests begin in the stand-in's log. */
async function restoredPod(replica: string, env: (dbPath: string) => Env): Promise<{ dbPath: string; run: CliResult; since: number }> {
  const dbPath = tempDbPath();
  const since = service.stats.requests.length;
  const run = await runCli(['--once'], { ...env(dbPath), THREAT_MIRROR_RESTORE_FROM: `file://${replica}` });
  expect(run.code, run.stderr).toBe(0);
  expect(restoredLog(run)).toBeDefined();
  return { dbPath, run, since };
}

// Made once for every test (a primary's run and its replication cost a few seconds each), so not
// through the per-test cleanup of test/support: removed after the file.
let service: Standin;
let folder: string;
const replicas = { acme: '', both: '', acmeNarrow: '' };
const replicators: ChildProcess[] = [];

/**
 * A primary's file replicated to `replica` by `litestream replicate`, stopped once its first
 * snapshot is written and `litestream generations` lists it (a restore then finds it).
 */
async function replicateOnce(dbPath: string, replica: string): Promise<void> {
  const config = `${replica}.yml`;
  writeFileSync(config, `dbs:\n  - path: ${dbPath}\n    replicas:\n      - type: file\n        path: ${replica}\n        sync-interval: 1s\n`);
  const { process: replicator, exited } = await startReplicating(config);
  replicators.push(replicator);
  // Stopped before any pod restores: the replica is what the snapshot wrote, and stays so.
  replicator.kill('SIGKILL');
  await exited;
  const generations = await new Promise<string>((resolve, reject) => {
    const lister = spawn(LITESTREAM, ['generations', '-config', config, dbPath], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    lister.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    lister.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`litestream generations exited ${code}`))));
  });
  expect(generations.trim().split('\n').slice(1)).toHaveLength(1);
}

/** A primary's `--once` into a new file of `folder`, replicated to a file replica beside it; the replica's path. */
async function primary(name: string, env: Env): Promise<string> {
  const dbPath = join(folder, `${name}.db`);
  const run = await runCli(['--once'], { ...env, THREAT_MIRROR_DB: dbPath });
  expect(run.code, run.stderr).toBe(0);
  const replica = join(folder, `${name}-replica`);
  await replicateOnce(dbPath, replica);
  return replica;
}

describe.skipIf(skipFor(missing))('a pod restored from a replica', () => {
  beforeAll(async () => {
    service = await startStandin({ threats, keys: { organizationKeys: { [ACME_KEY]: 'acme', [GLOBEX_KEY]: 'globex' }, userKeys: {} }, now: () => new Date(NOW) });
    folder = mkdtempSync(join(tmpdir(), 'threat-mirror-restore-pairs-'));
    const allowlist = join(folder, 'primary-allow.txt');
    writeFileSync(allowlist, 'allowed-by-the-primary-restore-pairs.com # the primary alone allows it\n');
    [replicas.acme, replicas.both, replicas.acmeNarrow] = await Promise.all([
      // acme alone, every type, with an allowlist of its own (the pods have another, or none).
      primary('acme', acmeOnly(service, '', { THREAT_MIRROR_ALLOWLIST: allowlist })),
      primary('both', both(service, '')),
      primary('acme-narrow', acmeOnly(service, '', { THREAT_MIRROR_ASSET_TYPES: 'URL,PAGE' })),
    ]);
    // The pods' first runs re-scan today and two closed days: at most 3 pages of acme's.
    const rescanned = listed('acme').filter((threat) => threat.blockedAt.slice(0, 10) >= addDays(TODAY, -2)).length;
    expect(Math.ceil(rescanned / 100)).toBeLessThanOrEqual(3);
  }, 60_000);

  afterAll(async () => {
    for (const replicator of replicators) replicator.kill('SIGKILL');
    await service?.close();
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  });

  it('meets a second organization: the replica holds acme alone, the pod configures acme and globex; acme comes with the file (at most 3 requests), globex is walked from scratch, both exact', async () => {
    const { dbPath, since } = await restoredPod(replicas.acme, (path) => both(service, path));
    const acme = listRequests(since, ACME_KEY);
    expect(acme.length).toBeLessThanOrEqual(3);
    expect(acme.every((request) => (request.body as { startDate: string }).startDate >= addDays(TODAY, -2))).toBe(true);
    expect(current(dbPath, 'acme')).toEqual(listed('acme'));
    // globex: its first run's history, every day of THREAT_MIRROR_INITIAL_DAYS.
    const globex = listRequests(since, GLOBEX_KEY);
    expect(globex.some((request) => (request.body as { startDate: string }).startDate === FIRST_DAY)).toBe(true);
    expect(current(dbPath, 'globex')).toEqual(listed('globex'));
    expect(scalar(dbPath, "SELECT history_from FROM sync_status WHERE organization = 'globex'")).toBe(FIRST_DAY);
    const status = await runCli(['status'], both(service, dbPath));
    expect(status.code, status.stdout).toBe(0);
  });

  it('meets an organization the replica holds but the pod does not configure: globex is retired at the first run, its threats kept but answered by no lookup', async () => {
    const globexThreats = listed('globex').length;
    const { dbPath, run, since } = await restoredPod(replicas.both, (path) => acmeOnly(service, path));
    expect(run.logs.find((line) => line.organization === 'globex' && line.level === 40)).toMatchObject({ hidden: globexThreats, msg: expect.stringContaining('no longer configured') });
    expect(listRequests(since, ACME_KEY).length).toBeLessThanOrEqual(3);
    expect(listRequests(since, GLOBEX_KEY)).toEqual([]);
    expect(current(dbPath, 'acme')).toEqual(listed('acme'));
    // Hidden from every answer, kept (configured again, it goes on from its checkpoint).
    expect(scalar(dbPath, "SELECT count(*) FROM in_force WHERE organization = 'globex'")).toBe(0);
    expect(scalar(dbPath, "SELECT count(*) FROM organization_threats WHERE organization = 'globex' AND removed_at IS NULL")).toBe(globexThreats);
    expect(withDb(dbPath, (db) => db.prepare('SELECT organization FROM sync_status').pluck().all())).toEqual(['acme']);
    // The pod asks about acme alone, synced and fresh, which does not block it: not blocked.
    const pod = await runCli(['lookup', GLOBEX_URL], acmeOnly(service, dbPath));
    expect(pod.stdout).toContain('not blocked');
    expect(pod.code, pod.stdout).toBe(1);
    // A reader configured as the primary was: it cannot vouch for globex, never "blocked".
    const asThePrimary = await runCli(['lookup', GLOBEX_URL], both(service, dbPath));
    expect(asThePrimary.stdout).toMatch(/cannot vouch.*organization "globex" is no longer configured/s);
    expect(asThePrimary.code, asThePrimary.stdout).toBe(3);
    // The pod is ready: acme synced and fresh, globex on a line of its own.
    const status = await runCli(['status'], acmeOnly(service, dbPath));
    expect(status.stdout).toMatch(new RegExp(`^globex: no longer configured since \\S+; its ${globexThreats} threats are hidden from every answer`, 'm'));
    expect(status.code, status.stdout).toBe(0);
    // Asked about by name: a usage error.
    const byName = await runCli(['lookup', '--org', 'globex', GLOBEX_URL], readerOf(dbPath));
    expect(byName.stderr).toMatch(/--org: organization "globex" is no longer configured/);
    expect(byName.code).toBe(2);
  });

  it('meets a narrower scope: the primary mirrors every type, the pod URL,PAGE; the restored addresses are hidden, and a lookup of one the service blocks is unknown, naming the scope', async () => {
    const { dbPath, since } = await restoredPod(replicas.acme, (path) => acmeOnly(service, path, { THREAT_MIRROR_ASSET_TYPES: 'URL,PAGE' }));
    // Narrowing fetches nothing: the incremental range alone, under the new scope.
    const requests = listRequests(since, ACME_KEY);
    expect(requests.length).toBeLessThanOrEqual(3);
    expect(requests.map((request) => (request.body as { assetType?: unknown }).assetType)).toEqual(requests.map(() => ['PAGE', 'URL']));
    expect(current(dbPath, 'acme')).toEqual(listed('acme', ['URL', 'PAGE']));
    expect(withDb(dbPath, (db) => db.prepare("SELECT DISTINCT type FROM enforced_threats WHERE organization = 'acme' ORDER BY 1").pluck().all())).toEqual(['PAGE', 'URL']);
    // The address came with the file and is hidden, not unblocked.
    expect(withDb(dbPath, (db) => db.prepare('SELECT out_of_scope, removed_at FROM organization_threats WHERE threat_id = ?').get(9_000_002))).toEqual({ out_of_scope: 1, removed_at: null });
    // The pod's own environment, a reader with the file alone, and one configured as the primary was
    // (every type): the scope a lookup judges by is the one the file records.
    for (const env of [acmeOnly(service, dbPath, { THREAT_MIRROR_ASSET_TYPES: 'URL,PAGE' }), readerOf(dbPath), acmeOnly(service, dbPath)]) {
      const lookup = await runCli(['lookup', ACME_ADDRESS_ASKED], env);
      expect(lookup.stdout).toContain('organization "acme" mirrors only PAGE, URL (THREAT_MIRROR_ASSET_TYPES): ADDRESS threats would match it');
      expect(lookup.code, lookup.stdout).toBe(3);
    }
  });

  it('meets a wider scope: the primary mirrors URL,PAGE, the pod every type; its first run walks every type over the restored days and ends exact, and the next needs the re-scan alone', async () => {
    const wide = (path: string): Env => acmeOnly(service, path);
    const { dbPath, run, since } = await restoredPod(replicas.acmeNarrow, wide);
    expect(run.logs.find((line) => line.organization === 'acme' && line.widening === '*')).toBeDefined();
    // The restored days walked again for every type (the interface has no "all but"), from the first one.
    const requests = listRequests(since, ACME_KEY);
    expect(requests.every((request) => (request.body as { assetType?: unknown }).assetType === undefined)).toBe(true);
    expect(requests.some((request) => (request.body as { startDate: string }).startDate === FIRST_DAY)).toBe(true);
    expect(current(dbPath, 'acme')).toEqual(listed('acme'));
    expect(scalar(dbPath, 'SELECT count(*) FROM sync_plans')).toBe(0);
    expect(scalar(dbPath, "SELECT asset_types FROM sync_status WHERE organization = 'acme'")).toBeNull();
    const blocked = await runCli(['lookup', ACME_ADDRESS_ASKED], wide(dbPath));
    expect(blocked.code, blocked.stdout).toBe(0);
    const unlisted = await runCli(['lookup', '0x00000000000000000000000000000000000dead1'], wide(dbPath));
    expect(unlisted.code, unlisted.stdout).toBe(1);
    // Widened whole: the next run is the incremental re-scan alone.
    const before = service.stats.requests.length;
    const next = await runCli(['--once'], wide(dbPath));
    expect(next.code, next.stderr).toBe(0);
    expect(listRequests(before, ACME_KEY).length).toBeLessThanOrEqual(3);
    expect(current(dbPath, 'acme')).toEqual(listed('acme'));
  });

  it("meets the allowlist: the pod's THREAT_MIRROR_ALLOWLIST allows a host the restored rows block (not blocked, exit 1, its reason; left out of the hosts export and enforced_threats), and the primary's own list is not the pod's", async () => {
    const allowlist = join(tempDir(), 'allow.txt');
    writeFileSync(allowlist, '# the pod\'s exceptions\nallowed-by-the-pod-restore-pairs.com # ticket 77: our own portal\n');
    const env = (path: string): Env => acmeOnly(service, path, { THREAT_MIRROR_ALLOWLIST: allowlist });
    const { dbPath } = await restoredPod(replicas.acme, env);
    expect(current(dbPath, 'acme')).toEqual(listed('acme'));

    const lookup = await runCli(['lookup', '--json', ALLOWED_URL], env(dbPath));
    expect(lookup.code, lookup.stdout).toBe(1);
    const [result] = (JSON.parse(lookup.stdout) as { results: Array<{ verdict: string; reason: string; blocked: boolean; matches: Array<{ id: number; allowed?: boolean; allowed_by?: { line: number; reason: string | null } }> }> }).results;
    expect(result).toMatchObject({ verdict: 'not_blocked', blocked: false, reason: expect.stringContaining('allowed locally by THREAT_MIRROR_ALLOWLIST line 2') });
    expect(result?.matches).toEqual([expect.objectContaining({ id: 9_000_003, allowed: true, allowed_by: expect.objectContaining({ line: 2, reason: 'ticket 77: our own portal' }) })]);
    // The primary's exception did not come with the file: the pod blocks what only the primary allowed.
    const primaryAllowed = await runCli(['lookup', PRIMARY_ALLOWED_URL], env(dbPath));
    expect(primaryAllowed.code, primaryAllowed.stdout).toBe(0);
    const enforced = withDb(dbPath, (db) => db.prepare("SELECT id FROM enforced_threats WHERE organization = 'acme' AND id IN (9000003, 9000004) ORDER BY id").pluck().all());
    expect(enforced).toEqual([9_000_004]);
    expect(withDb(dbPath, (db) => db.prepare('SELECT value, reason FROM allowlist ORDER BY line').all())).toEqual([{ value: 'allowed-by-the-pod-restore-pairs.com', reason: 'ticket 77: our own portal' }]);
    const hosts = await runCli(['export', '--format', 'hosts'], env(dbPath));
    expect(hosts.code, hosts.stderr).toBe(0);
    expect(hosts.stdout).not.toContain('allowed-by-the-pod-restore-pairs.com');
    expect(hosts.stdout).toContain('allowed-by-the-primary-restore-pairs.com');
    // A pod without THREAT_MIRROR_ALLOWLIST: SQL readers of its file enforce every restored block.
    const plain = await restoredPod(replicas.acme, (path) => acmeOnly(service, path));
    expect(scalar(plain.dbPath, 'SELECT count(*) FROM allowlist')).toBe(0);
    expect(scalar(plain.dbPath, "SELECT count(*) FROM enforced_threats WHERE organization = 'acme'")).toBe(listed('acme').length);
  });
});
