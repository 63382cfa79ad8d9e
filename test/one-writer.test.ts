// One writer: only the writer thread opens the mirror for writing and writes it (migrations, pages,
// runs, plans, settings, reports, the ledger, the close). Seen two ways: from outside, by the
// system calls that write the file, its WAL, its WAL index and its journal (strace, which names
// the thread of each); and in the source, by every connection the program opens.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateReports, generateThreats } from '../src/standin/index.js';
import { CLI_PATH } from './support/cli.js';
import { skipWithout } from './support/judges.js';
import { scalar, withDb } from './support/mirror-db.js';
import { mirrorEnvFor, startTestStandin } from './support/service.js';
import { tempDir } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEY = 'acme-key-one-writer';
const mirrorEnv = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_CONCURRENCY: '2' });

const strace = !skipWithout(['strace']);

interface Traced {
  readonly code: number | null;
  /** Per file of the database (mirror.db, mirror.db-wal, …): the thread ids that wrote it. */
  readonly writers: ReadonlyMap<string, ReadonlySet<number>>;
  /** The thread that wrote the log to stdout: the main thread. */
  readonly mainThread: number | undefined;
  /** The thread of each write of the database's files, in order, repeats folded: one writer at a time lists each once. */
  readonly turns: readonly number[];
}

/**
 * Runs the built CLI under `strace -f -y -e trace=pwrite64,write,ftruncate`; which threads wrote
 * which file. `until`, for the daemon: when its log says so, the CLI is sent SIGTERM.
 */
async function traced(args: readonly string[], env: Record<string, string>, dbPath: string, until?: (log: string) => boolean): Promise<Traced> {
  const traceFile = join(tempDir(), 'trace');
  const child = spawn('strace', ['-f', '-y', '-e', 'trace=pwrite64,write,ftruncate', '-o', traceFile, CLI_PATH, ...args], {
    env: { PATH: process.env.PATH ?? '', NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  let stopped = false;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    log += chunk;
    if (until === undefined || stopped || !until(log)) return;
    stopped = true;
    // The CLI is strace's child: SIGTERM goes to it, not to strace (which would only detach).
    const cli = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/)[0];
    process.kill(Number(cli), 'SIGTERM');
  });
  child.stderr.resume();
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const database = realpathSync(dbPath);
  const writers = new Map<string, Set<number>>();
  let mainThread: number | undefined;
  const turns: number[] = [];
  for (const line of readFileSync(traceFile, 'utf8').split('\n')) {
    // 12345 pwrite64(7</tmp/…/mirror.db-wal>, "…", 4120, 0) = 4120
    const call = /^(\d+)\s+(?:write|pwrite64|ftruncate)\((\d+)<([^>]*)>/.exec(line);
    if (!call) continue;
    const [, tid, fd, path] = call as unknown as [string, string, string, string];
    if (fd === '1') mainThread ??= Number(tid);
    // The database, its WAL, its WAL index, its journal: not the export index beside them (mirror.db.exports/).
    const suffix = path.startsWith(database) ? path.slice(database.length) : undefined;
    if (suffix === undefined || !['', '-wal', '-shm', '-journal'].includes(suffix)) continue;
    const file = `mirror.db${suffix}`;
    writers.set(file, (writers.get(file) ?? new Set()).add(Number(tid)));
    if (turns.at(-1) !== Number(tid)) turns.push(Number(tid));
  }
  return { code, writers, mainThread, turns };
}

function threadsOf(run: Traced): Set<number> {
  return new Set([...run.writers.values()].flatMap((tids) => [...tids]));
}

/** A stand-in of 1,000 threats over 10 days, a file for a daemon's mirror, its export files, and a host the mirror blocks. */
async function daemonMirror(): Promise<{ standin: Awaited<ReturnType<typeof startTestStandin>>; dir: string; dbPath: string; exports: string; host: string }> {
  const from = addDays(TODAY, -9);
  const threats = generateThreats({ seed: 30, organizations: ['acme'], count: 1_000, fromDay: from, toDay: TODAY });
  // Allowing this host changes the export files.
  const host = threats.map((threat) => (threat.type === 'URL' && URL.canParse(threat.content) ? new URL(threat.content).hostname : '')).find((name) => /^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(name));
  expect(host).toBeDefined();
  const standin = await startTestStandin({ threats, keys: { organizationKeys: { [KEY]: 'acme' }, userKeys: {} }, now: () => new Date(NOW) });
  const dir = tempDir();
  return { standin, dir, dbPath: join(dir, 'mirror.db'), exports: `rpz=${join(dir, 'zone.rpz')},csv=${join(dir, 'threats.csv')}`, host: host as string };
}

describe('the writer thread', () => {
  it.skipIf(!strace)('is the one thread that writes the file and its WAL, from the migrations to the close, and never the main thread', async () => {
    const from = addDays(TODAY, -19);
    const threats = generateThreats({ seed: 28, organizations: ['acme'], count: 3_000, fromDay: from, toDay: TODAY });
    const standin = await startTestStandin({
      threats,
      reports: generateReports({ seed: 29, organizations: ['acme'], count: 40, fromDay: from, toDay: TODAY, threats }),
      keys: { organizationKeys: { [KEY]: 'acme' }, userKeys: {} },
      now: () => new Date(NOW),
    });
    const dbPath = join(tempDir(), 'mirror.db');
    // A first backfill: the file created and migrated, pages, windows, the ledger, deferred indexes.
    const backfill = await traced(['--backfill', '--from', from], mirrorEnv(standin, dbPath), dbPath);
    expect(backfill.code).toBe(0);
    expect([...backfill.writers.keys()].sort()).toEqual(expect.arrayContaining(['mirror.db', 'mirror.db-wal']));
    // Then runs, plans, settings, reports and a reconciliation of every day.
    standin.removeThreats([threats[10]?.id as number, threats[2_000]?.id as number]);
    const once = await traced(
      ['--once'],
      mirrorEnv(standin, dbPath, { THREAT_MIRROR_REPORTS: '1', THREAT_MIRROR_RECONCILE_DAYS: '0', THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '1000' }),
      dbPath,
    );
    expect(once.code).toBe(0);
    for (const run of [backfill, once]) {
      expect(threadsOf(run).size).toBe(1);
      expect(run.mainThread).toBeDefined();
      expect(threadsOf(run).has(run.mainThread as number)).toBe(false);
    }
    expect(scalar(dbPath, 'SELECT count(*) FROM organization_threats WHERE removed_at IS NULL')).toBe(threats.length - 2);
    expect(scalar(dbPath, "SELECT count(*) FROM sync_runs WHERE mode = 'reconcile' AND status = 'succeeded'")).toBe(1);
    expect(scalar(dbPath, 'SELECT count(*) FROM reports')).toBeGreaterThan(0);
  });

  it.skipIf(!strace)('is one thread at a time in a daemon serving lookups, DNS and exports beside it: started for each run, ended after it, started again to close', async () => {
    const { standin, dbPath, exports } = await daemonMirror();
    const settings = { THREAT_MIRROR_INITIAL_DAYS: '10', THREAT_MIRROR_HTTP_PORT: '0', THREAT_MIRROR_DNS_PORT: '0', THREAT_MIRROR_EXPORTS: exports, THREAT_MIRROR_SCHEDULE: '*/2 * * * * *' };
    // Stopped once a second run has succeeded after the first run's files were written (the
    // refresh job read the mirror and wrote the export index in between).
    const secondRun = (log: string): boolean => /"status":"succeeded"[\s\S]*"msg":"export written"[\s\S]*"msg":"export written"[\s\S]*"status":"succeeded"/.test(log);
    const daemon = await traced([], mirrorEnv(standin, dbPath, settings), dbPath, secondRun);
    expect(daemon.code).toBe(0);
    expect([...daemon.writers.keys()]).toEqual(expect.arrayContaining(['mirror.db', 'mirror.db-wal']));
    // The first run's thread, the second run's, the one that closes (more if a third run began):
    // each writes, and ends, before the next writes at all; none is the main thread.
    expect(daemon.turns.length).toBeGreaterThanOrEqual(3);
    expect(new Set(daemon.turns).size).toBe(daemon.turns.length);
    expect(daemon.mainThread).toBeDefined();
    expect(daemon.turns).not.toContain(daemon.mainThread);
    expect(scalar(dbPath, 'SELECT count(*) FROM threats')).toBe(1_000);
    // The last close left the file at rest in WAL mode, its WAL folded in, -wal and -shm in place (for readers on read-only mounts).
    expect(scalar(dbPath, 'PRAGMA journal_mode')).toBe('wal');
    expect(statSync(`${dbPath}-wal`).size).toBe(0);
    expect(existsSync(`${dbPath}-shm`)).toBe(true);
  });

  it.skipIf(!strace)('writes the table allowlist of a daemon following its file, one thread at a time and never the main thread', async () => {
    const { standin, dir, dbPath, exports, host } = await daemonMirror();
    const allowlist = join(dir, 'allow.txt');
    writeFileSync(allowlist, 'customer.example # at start\n');
    const settings = {
      THREAT_MIRROR_INITIAL_DAYS: '10',
      THREAT_MIRROR_HTTP_PORT: '0',
      THREAT_MIRROR_DNS_PORT: '0',
      THREAT_MIRROR_EXPORTS: exports,
      THREAT_MIRROR_SCHEDULE: '0 0 1 1 *',
      THREAT_MIRROR_ALLOWLIST: allowlist,
    };
    // Once the first run's files are written (the refresh job has read the mirror and written the
    // export index), the allowlist changes; stopped once the files are written again after it (the
    // writer thread has replaced the table allowlist before that).
    let changed = false;
    const stopAt = (log: string): boolean => {
      if (!changed && /"status":"succeeded"[\s\S]*"msg":"export written"[\s\S]*"msg":"export written"/.test(log)) {
        changed = true;
        writeFileSync(allowlist, `customer.example # at start\n${host} # added while running\n`);
      }
      return changed && /"msg":"allowlist changed[^"]*"[\s\S]*"msg":"export written"/.test(log);
    };
    const daemon = await traced([], mirrorEnv(standin, dbPath, settings), dbPath, stopAt);
    expect(daemon.code).toBe(0);
    expect(withDb(dbPath, (db) => db.prepare('SELECT value FROM allowlist ORDER BY line').pluck().all())).toEqual(['customer.example', host]);
    // The change came while the writer thread was stopped between runs: a thread started for it
    // and ended after it (the daemon idles without one), so the close started another: the run's,
    // the change's, the close's.
    expect(new Set(daemon.turns).size).toBe(daemon.turns.length);
    expect(daemon.turns.length).toBeGreaterThanOrEqual(3);
    expect(daemon.mainThread).toBeDefined();
    expect(daemon.turns).not.toContain(daemon.mainThread);
    expect(scalar(dbPath, 'SELECT count(*) FROM threats')).toBe(1_000);
    // The last close left the file at rest in WAL mode, its WAL folded in, -wal and -shm in place (for readers on read-only mounts).
    expect(scalar(dbPath, 'PRAGMA journal_mode')).toBe('wal');
    expect(statSync(`${dbPath}-wal`).size).toBe(0);
    expect(existsSync(`${dbPath}-shm`)).toBe(true);
  });
});

describe('the connections the program opens', () => {
  it('are read-only everywhere but the writer thread, the writer lock, a restored copy and the export databases of their own', () => {
    const src = join(import.meta.dirname, '..', 'src');
    const files = (readdirSync(src, { recursive: true }) as string[]).filter((file) => file.endsWith('.ts') && !file.startsWith('standin'));
    const opening: Record<string, string[]> = {};
    for (const file of files) {
      const text = readFileSync(join(src, file), 'utf8');
      for (const match of text.matchAll(/new Database\(([^)]*)\)/g)) (opening[relative(src, join(src, file))] ??= []).push(match[1] as string);
    }
    const writable = Object.entries(opening)
      .filter(([, calls]) => calls.some((call) => !call.includes('readonly: true')))
      .map(([file]) => file)
      .sort();
    expect(writable).toEqual([
      // A side file: the lock's exclusive transaction, never the mirror (db/database-files.ts lists it).
      'db/writer-lock.ts',
      // A copy restored from a replica, before its rename into the database's place: its primary's
      // feed id taken out (under the writer lock, before the writer thread starts), never the mirror.
      'db/writer/restored-file.ts',
      // The one writable connection to the mirror.
      'db/writer/writer-connection.ts',
      // A scratch database of its own, in memory or a temporary file: the host list being built.
      'export/host-set.ts',
      // The export index: a file of its own beside the mirror, its only writer the refresh job thread.
      'export/index/export-index.ts',
    ]);
  });
});
