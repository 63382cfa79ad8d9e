// Every path derived from the database's path, spelled here only, and whether a path names one of
// the database's files however it is spelled. An output (export --out, snapshot --out,
// THREAT_MIRROR_EXPORTS, THREAT_MIRROR_SNAPSHOT) is written to a temporary file and renamed over its
// target: aimed at the database, it replaced the mirror with a block list while the writer went on
// writing an unlinked file.
import { type Dirent, existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { ConfigError } from '../lib/errors.js';

/** What SQLite keeps beside a database file: the write-ahead log, its index, a rollback journal. */
const WAL = '-wal';
const SHM = '-shm';
const JOURNAL = '-journal';
/** The writer's lock (writer-lock.ts). */
const WRITER_LOCK = '.writer-lock';
/** The daemon's folder beside the database: the export index and the feeds rendered from it (daemon/enforcement.ts). */
const EXPORTS = '.exports';
/** A copy restored from a replica, checked there before it takes the database's place (session/replica-restore.ts). */
const RESTORING = '.restoring';

/** The database's own files, which no output may replace. */
const DATABASE_FILES: ReadonlyArray<{ readonly suffix: string; readonly what: string }> = [
  { suffix: '', what: 'the database' },
  { suffix: WAL, what: "the database's write-ahead log" },
  { suffix: SHM, what: "the database's WAL index" },
  { suffix: JOURNAL, what: "the database's rollback journal" },
  { suffix: WRITER_LOCK, what: "the database's writer lock" },
];

export function walPathOf(dbPath: string): string {
  return `${dbPath}${WAL}`;
}

export function writerLockPathOf(dbPath: string): string {
  return `${dbPath}${WRITER_LOCK}`;
}

/** Where the daemon keeps the export index and its feeds; emptied when it stops, but for the index (its zone's serial goes on at the next start). */
export function exportsFolderOf(dbPath: string): string {
  return `${dbPath}${EXPORTS}`;
}

/** The export index (export/index/): a SQLite file of its own in the daemon's folder. */
export function exportIndexPathOf(dbPath: string): string {
  return join(exportsFolderOf(dbPath), 'index.db');
}

/** Where the serving thread renders the feeds (serve/export-feeds.ts). */
export function feedsFolderOf(dbPath: string): string {
  return join(exportsFolderOf(dbPath), 'feeds');
}

/** Where a copy restored from the replica is checked before it takes the database's place. */
export function restoringPathOf(dbPath: string): string {
  return `${dbPath}${RESTORING}`;
}

/**
 * What a restore killed at any instant may leave beside the database, as absolute paths: the copy,
 * its WAL, WAL index and journal, and Litestream's own work files (`.restoring.tmp`,
 * `.restoring.tmp-wal`, `.restoring.tmp-00000001-wal`, ...). Files only, and none other.
 */
export function restoringFilesOf(dbPath: string): string[] {
  const restoring = resolve(restoringPathOf(dbPath));
  const ours = new Set(sqliteFilesOf(basename(restoring)));
  const litestreams = `${basename(restoring)}.tmp`;
  let entries: Dirent[];
  try {
    entries = readdirSync(dirname(restoring), { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.filter((entry) => entry.isFile() && (ours.has(entry.name) || entry.name.startsWith(litestreams))).map((entry) => join(dirname(restoring), entry.name));
}

/** What SQLite may keep beside the file at `path`: its WAL, WAL index and rollback journal. */
export function sqliteSidecarsOf(path: string): string[] {
  return [WAL, SHM, JOURNAL].map((suffix) => `${path}${suffix}`);
}

/** A SQLite file and what SQLite may keep beside it: what goes when a scratch database (the export index) is made afresh. */
export function sqliteFilesOf(path: string): string[] {
  return [path, ...sqliteSidecarsOf(path)];
}

/** The files the writer writes: the database, its WAL and WAL index, its lock (writable-path.ts checks each there is). */
export function writerFilesOf(dbPath: string): string[] {
  return ['', WAL, SHM, WRITER_LOCK].map((suffix) => `${dbPath}${suffix}`);
}

/**
 * What `target` is of the database's files ("the database's write-ahead log (/data/mirror.db-wal)"),
 * or undefined when it is none of them. Paths are compared resolved (relative, `..`), with every
 * symbolic link in them followed, and an existing target by device and inode too (a hard link, a
 * bind mount).
 */
export function databaseFileAt(target: string, dbPath: string): string | undefined {
  const targetSpellings = spellings(target);
  const targetIdentity = identity(target);
  const databaseBases = spellings(dbPath);
  for (const { suffix, what } of DATABASE_FILES) {
    const names = databaseBases.map((base) => `${base}${suffix}`);
    const file = `${resolve(dbPath)}${suffix}`;
    if (names.some((name) => targetSpellings.includes(name))) return `${what} (${file})`;
    if (targetIdentity === undefined) continue;
    for (const name of names) {
      if (identity(name) === targetIdentity) return `${what} (${file})`;
    }
  }
  return undefined;
}

/** The path resolved, with its folder's links followed, and with its own link followed if it is one. */
function spellings(path: string): string[] {
  const absolute = resolve(path);
  const found = new Set([absolute, join(realFolder(dirname(absolute)), basename(absolute))]);
  try {
    found.add(realpathSync(absolute));
  } catch {
    // not there (yet), or a dangling link: its folder's spelling stands
  }
  return [...found];
}

/** The real path of a folder; for one that does not exist yet, of its nearest existing ancestor, plus the rest. */
function realFolder(folder: string): string {
  const missing: string[] = [];
  let at = folder;
  while (!existsSync(at) && dirname(at) !== at) {
    missing.unshift(basename(at));
    at = dirname(at);
  }
  try {
    return join(realpathSync(at), ...missing);
  } catch {
    return folder;
  }
}

/** device:inode of what the path names (links followed), or undefined when there is nothing there. */
function identity(path: string): string | undefined {
  try {
    const stats = statSync(path, { bigint: true });
    return `${stats.dev}:${stats.ino}`;
  } catch {
    return undefined;
  }
}

/**
 * The message refusing an output (`name` is the flag or variable that gave it) when it, or a file
 * written beside it, is one of the database's files; undefined when none is.
 */
export function refusalOfDatabaseFile(name: string, output: string, written: readonly string[], dbPath: string): string | undefined {
  for (const path of [output, ...written]) {
    const what = databaseFileAt(path, dbPath);
    if (what === undefined) continue;
    const which = path === output ? output : `${output} (its ${path.slice(output.length)} file beside it)`;
    return `${name}: ${which} is ${what}; writing there would replace the live mirror: choose another path`;
  }
  return undefined;
}

/** For a variable: its output path, unless it (or a file written beside it) is one of the database's files. */
export function assertNotDatabaseFile<T extends string | undefined>(variable: string, path: T, dbPath: string, beside: (path: string) => string[] = () => []): T {
  if (path === undefined) return path;
  const refusal = refusalOfDatabaseFile(variable, path, beside(path), dbPath);
  if (refusal !== undefined) throw new ConfigError(refusal);
  return path;
}
