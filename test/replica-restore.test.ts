// A new pod starts from a replica (issue 41): a primary replicates its file to an S3 bucket with
// the real Litestream 0.3.13; fresh sidecars given THREAT_MIRROR_RESTORE_FROM restore it before
// their writer opens the path, and their first run costs what the re-scanned days cost, not the
// history. The bucket is s3rver's (test/support/object-store.ts). No replica yet: a sidecar starts
// empty, as before; a replica of something else is refused (exit 1), never walked over.
import { execFile } from 'node:child_process';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { promisify } from 'node:util';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadReplica, type ReplicaConfig } from '../src/config/replica.js';
import { Database } from '../src/db/sqlite.js';
import { addDays } from '../src/lib/days.js';
import { restoreIfMissing } from '../src/session/replica-restore.js';
import { generateThreats, type Standin } from '../src/standin/index.js';
import { type CliProcess, runCli, startCli } from './support/cli.js';
import { afterThisTest } from './support/cleanup.js';
import { skipFor } from './support/judges.js';
import { LITESTREAM, LITESTREAM_MISSING as missing, startReplicating } from './support/litestream.js';
import { scalar } from './support/mirror-db.js';
import { OBJECT_STORE_KEYS, startObjectStore } from './support/object-store.js';
import { EVERY_SECOND_DAEMON, mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath, tempDir } from './support/temp.js';
import { currentThreats, listed } from './support/walk-data.js';


const KEY = 'acme-replica-key';
const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
/** 40 days of history: what a pod without a replica walks at its first run. */
const DAYS = 40;
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: String(DAYS), ...OBJECT_STORE_KEYS });

function serve(): Promise<Standin> {
  return serveThreats(KEY, NOW, generateThreats({ seed: 4101, organizations: ['acme'], count: 3000, fromDay: addDays(TODAY, -(DAYS - 1)), toDay: TODAY }));
}

/** Runs `litestream replicate` until the test ends (or the kill it resolves with); resolves once its first snapshot is written. */
async function replicate(config: string): Promise<() => void> {
  const replicating = startReplicating(config);
  const kill = (): void => void replicating.then(({ process }) => process.kill('SIGKILL'), () => undefined);
  afterThisTest('processes', kill);
  await replicating;
  return kill;
}

const FEED_ID_SQL = "SELECT value FROM mirror_settings WHERE key = 'feed_id'";

/**
 * A reader of the change feed as docs/schema.md tells one to be: its copy of acme's current
 * threats, kept by change_seq, started over when the feed's id is not the one its place belongs to.
 */
class FeedCopy {
  readonly held = new Set<number>();
  startedOver = 0;
  #feedId: string | undefined;
  #last = 0;

  read(dbPath: string): void {
    const db = new Database(dbPath, { readonly: true });
    try {
      const feedId = db.prepare(FEED_ID_SQL).pluck().get() as string | undefined;
      if (feedId !== this.#feedId) {
        if (this.#feedId !== undefined) this.startedOver += 1;
        this.held.clear();
        this.#last = 0;
        this.#feedId = feedId;
      }
      const rows = db
        .prepare(`SELECT t.id, t.change_seq AS seq, EXISTS (SELECT 1 FROM current_threats c WHERE c.id = t.id AND c.organization = 'acme') AS current
                    FROM threats t WHERE t.change_seq > ? ORDER BY t.change_seq`)
        .all(this.#last) as Array<{ id: number; seq: number; current: number }>;
      for (const row of rows) {
        if (row.current === 1) this.held.add(row.id);
        else this.held.delete(row.id);
        this.#last = row.seq;
      }
    } finally {
      db.close();
    }
  }
}

/**
 * The replica lists a generation: a restore then finds it (never race the first upload). Not
 * spawnSync: the bucket is served by this process, whose event loop must go on answering.
 */
async function expectOneGeneration(config: string, dbPath: string): Promise<void> {
  const { stdout } = await promisify(execFile)(LITESTREAM, ['generations', '-config', config, dbPath], { encoding: 'utf8', timeout: 60_000 });
  expect(stdout.trim().split('\n').slice(1)).toHaveLength(1);
}

describe.skipIf(skipFor(missing))('a new pod starts from a replica', { timeout: 180_000 }, () => {
  it('three fresh sidecars restore the primary from an S3 bucket (one through a Litestream configuration naming the endpoint): each exact after its first run, at most 3 requests each', async () => {
    const service = await serve();
    const store = await startObjectStore('mirror');
    const primary = join(tempDir(), 'primary.db');
    // The primary: the daemon with Litestream beside it, which alone checkpoints.
    const daemon = startCli([], env(service, primary, { ...EVERY_SECOND_DAEMON, THREAT_MIRROR_CHECKPOINTS: 'external' }));
    await daemon.waitForLog((line) => typeof line.msg === 'string' && line.msg.startsWith('sync of organization') && line.status === 'succeeded');
    const walked = service.stats.requests.length;
    expect(walked).toBeGreaterThan(DAYS / 2);
    const config = join(tempDir(), 'litestream.yml');
    writeFileSync(
      config,
      `dbs:\n  - path: ${primary}\n    replicas:\n      - type: s3\n        bucket: mirror\n        path: acme\n        endpoint: http://127.0.0.1:${store.port}\n` +
        `        region: us-east-1\n        force-path-style: true\n        sync-interval: 1s\n        access-key-id: S3RVER\n        secret-access-key: S3RVER\n`,
    );
    await replicate(config);
    await expectOneGeneration(config, primary);
    // The primary stops, so that every request from here on is a sidecar's (Litestream ships what it had last).
    await daemon.stop('SIGTERM');

    const rescanned = listed(service, KEY).filter((threat) => threat.blockedAt.slice(0, 10) >= addDays(TODAY, -2)).length;
    expect(Math.ceil(rescanned / 100)).toBeLessThanOrEqual(3);
    for (const sidecar of ['once', 'once with a configuration', 'daemon'] as const) {
      const dbPath = tempDbPath();
      const before = service.stats.requests.length;
      // An endpoint Litestream 0.3 cannot read from a URL (127.0.0.1, as MinIO's service name would be): its configuration names it.
      const podConfig = join(tempDir(), 'litestream.yml');
      writeFileSync(
        podConfig,
        `dbs:\n  - path: ${dbPath}\n    replicas:\n      - type: s3\n        bucket: mirror\n        path: acme\n        endpoint: http://127.0.0.1:${store.port}\n        region: us-east-1\n        force-path-style: true\n`,
      );
      const restoreFrom: Record<string, string> = sidecar === 'once with a configuration' ? { THREAT_MIRROR_RESTORE_CONFIG: podConfig } : { THREAT_MIRROR_RESTORE_FROM: store.url('acme') };
      const sidecarEnv = env(service, dbPath, restoreFrom);
      let logs: Array<Record<string, unknown>>;
      if (sidecar !== 'daemon') {
        const run = await runCli(['--once'], sidecarEnv);
        expect(run.code, run.stderr).toBe(0);
        logs = run.logs;
      } else {
        // A daemon whose next tick is far off: every request until it stops is its first run's.
        const pod = startCli([], { ...sidecarEnv, ...EVERY_SECOND_DAEMON, THREAT_MIRROR_SCHEDULE: '0 0 1 1 *' });
        await pod.waitForLog((line) => typeof line.msg === 'string' && line.msg.startsWith('sync of organization') && line.status === 'succeeded');
        await pod.stop('SIGTERM');
        logs = pod.logs;
      }
      const first = service.stats.requests.slice(before);
      expect(logs.find((line) => line.msg === 'restored the database from its replica; the runs go on from its checkpoints')).toBeDefined();
      // Its first run: the re-scanned days (today and two closed days), in one window; the history came with the file.
      const firstRun = logs.find((line) => typeof line.msg === 'string' && line.msg.startsWith('sync of organization'));
      expect(firstRun?.pages).toBeLessThanOrEqual(3);
      expect(first.length).toBeLessThanOrEqual(3);
      expect(first.every((request) => (request.body as { startDate: string }).startDate >= addDays(TODAY, -2))).toBe(true);
      expect(currentThreats(dbPath)).toEqual(listed(service, KEY));
      expect(scalar(dbPath, 'PRAGMA integrity_check')).toBe('ok');
    }
    // Without the replica, a pod walked the 40 days.
    expect(walked).toBeGreaterThan(10 * 3);
  });

  it("gives a restored file's change feed a new id: a reader that kept its place in the primary's feed starts over, and holds no threat unblocked within the replica's lag", async () => {
    const service = await serve();
    const folder = tempDir();
    const primary = join(folder, 'primary.db');
    expect((await runCli(['--once'], env(service, primary))).code).toBe(0);
    const config = join(folder, 'litestream.yml');
    writeFileSync(config, `dbs:\n  - path: ${primary}\n    replicas:\n      - type: file\n        path: ${join(folder, 'replica')}\n        sync-interval: 1s\n`);
    const stopReplicating = await replicate(config);
    await expectOneGeneration(config, primary);
    // Replication stops: from here on the replica lags its primary.
    stopReplicating();
    const reader = new FeedCopy();
    reader.read(primary);
    // Blocked, seen by the reader in the primary's feed, then unblocked before the new pod starts.
    const fleeting = { id: 9_000_001, content: 'https://blocked-within-the-lag.example/', type: 'URL', blockedAt: `${TODAY}T09:00:00.000Z`, organization: 'acme' };
    service.addThreats([fleeting]);
    expect((await runCli(['--once'], env(service, primary))).code).toBe(0);
    reader.read(primary);
    expect(reader.held.has(fleeting.id)).toBe(true);
    service.removeThreats([fleeting.id]);

    // The pod's daemon restores, then runs again and again (its writer thread starts anew at each run).
    const restored = tempDbPath();
    const pod = startCli([], env(service, restored, { ...EVERY_SECOND_DAEMON, THREAT_MIRROR_RESTORE_FROM: `file://${join(folder, 'replica')}` }));
    const runsDone = (): number => pod.logs.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('sync of organization') && line.status === 'succeeded').length;
    await pod.waitForLog(() => runsDone() >= 1);
    const feedId = scalar<string>(restored, FEED_ID_SQL);
    expect(feedId).not.toBe(scalar<string>(primary, FEED_ID_SQL));
    reader.read(restored);
    expect(reader.startedOver).toBe(1);
    expect(reader.held.has(fleeting.id)).toBe(false);
    expect([...reader.held].sort((a, b) => a - b)).toEqual(currentThreats(restored).map((threat) => threat.id));
    await pod.waitForLog(() => runsDone() >= 3);
    await pod.stop('SIGTERM');
    // Later runs of the same file keep its id: the reader goes on from its place.
    expect(scalar<string>(restored, FEED_ID_SQL)).toBe(feedId);
    reader.read(restored);
    expect(reader.startedOver).toBe(1);
    expect([...reader.held].sort((a, b) => a - b)).toEqual(currentThreats(restored).map((threat) => threat.id));
  });

  it('a start killed at any instant of its restore leaves nothing that stops the next start, nor the primary feed id in the file', async () => {
    const service = await serve();
    const folder = tempDir();
    const primary = join(folder, 'primary.db');
    expect((await runCli(['--once'], env(service, primary))).code).toBe(0);
    const replicaFolder = join(folder, 'replica');
    const config = join(folder, 'litestream.yml');
    writeFileSync(config, `dbs:\n  - path: ${primary}\n    replicas:\n      - type: file\n        path: ${replicaFolder}\n        sync-interval: 1s\n`);
    await replicate(config);
    await expectOneGeneration(config, primary);
    const primaryFeed = scalar<string>(primary, FEED_ID_SQL);
    const leftBeside = (dbPath: string): string[] => readdirSync(dirname(dbPath)).filter((name) => name.startsWith(`${basename(dbPath)}.restoring`));

    // Killed after Litestream wrote the copy, before its rename: the copy and Litestream's files stay.
    // The next start restores again (Litestream refuses to write over a file: every start failed).
    // The replica is named by its absolute path, which Litestream 0.3 reads only as a file:// URL.
    const killedBefore = tempDbPath();
    for (const leftover of ['.restoring', '.restoring.tmp', '.restoring.tmp-wal', '.restoring-wal']) writeFileSync(`${killedBefore}${leftover}`, 'left by a killed start');
    // A file that merely shares the prefix is not the restore's.
    const neighbour = `${killedBefore}.restoring-eu.db`;
    writeFileSync(neighbour, 'another file');
    const again = await runCli(['--once'], env(service, killedBefore, { THREAT_MIRROR_RESTORE_FROM: replicaFolder }));
    expect(again.code, again.stderr).toBe(0);
    expect(again.logs.find((line) => line.msg === 'restored the database from its replica; the runs go on from its checkpoints')).toBeDefined();
    expect(leftBeside(killedBefore)).toEqual([basename(neighbour)]);
    expect(currentThreats(killedBefore)).toEqual(listed(service, KEY));
    expect(scalar<string>(killedBefore, FEED_ID_SQL)).not.toBe(primaryFeed);

    // Killed right after the rename, before its writer gave the feed an id: the restore alone, as the
    // start runs it; the next start finds the file and restores nothing. It must not keep the primary's id.
    // The path spelled relative, as THREAT_MIRROR_DB's default is (the copy was once removed as a leftover).
    const killedAfter = tempDbPath();
    const replica = loadReplica({ THREAT_MIRROR_RESTORE_FROM: replicaFolder, THREAT_MIRROR_LITESTREAM: LITESTREAM }, killedAfter);
    expect((await restoreIfMissing(relative(process.cwd(), killedAfter), replica as ReplicaConfig))?.restored).toBe(true);
    expect(leftBeside(killedAfter)).toEqual([]);
    expect(scalar<string | undefined>(killedAfter, FEED_ID_SQL)).toBeUndefined();
    const next = await runCli(['--once'], env(service, killedAfter, { THREAT_MIRROR_RESTORE_FROM: replicaFolder }));
    expect(next.code, next.stderr).toBe(0);
    expect(next.logs.find((line) => typeof line.msg === 'string' && line.msg.startsWith('restored the database'))).toBeUndefined();
    expect(scalar<string>(killedAfter, FEED_ID_SQL)).toMatch(/^[0-9a-f-]{36}$/);
    expect(scalar<string>(killedAfter, FEED_ID_SQL)).not.toBe(primaryFeed);
    expect(currentThreats(killedAfter)).toEqual(listed(service, KEY));
  });

  /** A pod whose restore waits on an endpoint that accepts and never answers, as on a hung S3; resolved once Litestream has connected. */
  async function stuckRestore(wrapper: string | undefined): Promise<{ pod: CliProcess; sockets: Set<Socket>; dbPath: string; service: Standin }> {
    const sockets = new Set<Socket>();
    let onConnection = (): void => undefined;
    const connected = new Promise<void>((resolve) => {
      onConnection = resolve;
    });
    const hung = createServer((socket) => {
      sockets.add(socket);
      // Read (and drop) the request, so that the peer's close is seen.
      socket.resume();
      socket.on('close', () => sockets.delete(socket));
      onConnection();
    });
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    afterThisTest('processes', () => {
      for (const socket of sockets) socket.destroy();
      hung.close();
    });
    const dbPath = tempDbPath();
    const podConfig = join(tempDir(), 'litestream.yml');
    const { port } = hung.address() as AddressInfo;
    writeFileSync(podConfig, `dbs:\n  - path: ${dbPath}\n    replicas:\n      - type: s3\n        bucket: mirror\n        path: acme\n        endpoint: http://127.0.0.1:${port}\n        region: us-east-1\n        force-path-style: true\n`);
    const service = await serve();
    const litestream: Record<string, string> = {};
    if (wrapper !== undefined) {
      litestream.THREAT_MIRROR_LITESTREAM = join(tempDir(), 'litestream-wrapper.sh');
      writeFileSync(litestream.THREAT_MIRROR_LITESTREAM, wrapper, { mode: 0o755 });
    }
    const pod = startCli(['--once'], env(service, dbPath, { THREAT_MIRROR_RESTORE_CONFIG: podConfig, ...litestream }));
    await connected;
    return { pod, sockets, dbPath, service };
  }

  it.each([
    ['Litestream itself', undefined],
    // A wrapper that ignores SIGTERM (so does the Litestream it runs) and holds Litestream's pipes.
    ['a wrapper ignoring SIGTERM', `#!/bin/sh\ntrap '' TERM\n"${LITESTREAM}" "$@"\n`],
    // Litestream stopped, the wrapper then outlives SIGTERM holding the pipes: killed after its grace.
    ['a wrapper outliving SIGTERM', `#!/bin/sh\ntrap '' TERM\n"${LITESTREAM}" "$@"\nexec sleep 30\n`],
  ])('stops a restore stuck on an object store that never answers at SIGTERM (%s): exit 1 naming it, Litestream gone, nothing left beside the file', async (_, wrapper) => {
    const { pod, sockets, dbPath, service } = await stuckRestore(wrapper);
    pod.kill('SIGTERM');
    const stopped = await pod.exited;
    expect(stopped.code).toBe(1);
    // Not the forced exit of a graceful stop that overran (9 s): the restore itself was stopped.
    expect(stopped.stderr).toContain('THREAT_MIRROR_RESTORE_CONFIG: the restore from');
    expect(stopped.stderr).toContain('was stopped by SIGTERM; the next start restores again');
    // Litestream exited with it: its connections to the store are closed, not left to a process nobody waits for.
    await vi.waitFor(() => expect(sockets.size).toBe(0), { timeout: 10_000 });
    // Only the writer's lock file, which every start leaves: no database, no copy half-restored.
    expect(readdirSync(dirname(dbPath)).filter((name) => name.startsWith(basename(dbPath)))).toEqual([`${basename(dbPath)}.writer-lock`]);
    expect(service.stats.requests).toHaveLength(0);
  });

  it('a second Ctrl-C exits at once (130) and takes the restore with it, a wrapper that outlives the first included', async () => {
    const pidFile = join(tempDir(), 'wrapper.pid');
    const { pod } = await stuckRestore(`#!/bin/sh\necho $$ > ${pidFile}\ntrap '' TERM INT\n"${LITESTREAM}" "$@"\nexec sleep 30\n`);
    pod.kill('SIGINT');
    // Sent once the first is taken (two signals sent at once may arrive as one).
    await pod.waitForLog((line) => typeof line.msg === 'string' && line.msg.startsWith('SIGINT: stopping'));
    pod.kill('SIGINT');
    expect((await pod.exited).code).toBe(130);
    // The wrapper (its own session: the terminal's signals never reach it) is gone, or a zombie nobody reaped.
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await vi.waitFor(() => expect(existsSync(`/proc/${pid}`) ? readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] : 'gone').toMatch(/^(gone|Z|X)$/), { timeout: 5_000 });
  });

  it('starts empty when the replica holds no backup yet, and refuses a replica that is not a mirror (exit 1, the file left absent)', async () => {
    const service = await serve();
    const store = await startObjectStore('mirror');
    const empty = tempDbPath();
    const run = await runCli(['--once'], env(service, empty, { THREAT_MIRROR_RESTORE_FROM: store.url('nothing-here') }));
    expect(run.code, run.stderr).toBe(0);
    expect(run.logs.find((line) => typeof line.msg === 'string' && line.msg.startsWith('no replica to restore the database from yet'))).toBeDefined();
    expect(currentThreats(empty)).toEqual(listed(service, KEY));

    // A file replica of a database that is not a mirror.
    const folder = tempDir();
    const other = join(folder, 'other.db');
    const db = new Database(other);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES (\'not a mirror\')');
    db.close();
    const config = join(folder, 'litestream.yml');
    writeFileSync(config, `dbs:\n  - path: ${other}\n    replicas:\n      - type: file\n        path: ${join(folder, 'replica')}\n        sync-interval: 1s\n`);
    await replicate(config);
    await expectOneGeneration(config, other);
    const dbPath = tempDbPath();
    const before = service.stats.requests.length;
    const refused = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_RESTORE_FROM: `file://${join(folder, 'replica')}` }));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('THREAT_MIRROR_RESTORE_FROM: the copy restored from');
    expect(refused.stderr).toContain('it is not a threat-mirror database');
    expect(existsSync(dbPath)).toBe(false);
    expect(service.stats.requests.length).toBe(before);
  });
});
