// Opens the SQLite file with the pragmas readers and the writer rely on, and applies migrations.
import { dirname, join, resolve } from 'node:path';
import { Database } from './sqlite.js';
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { packageRoot } from '../lib/package-root.js';
import * as schema from './schema.js';
import { applyWriterPragmas, type WriterPragmaOptions } from './writer-pragmas.js';
import { buildDeferredIndexes } from './deferred-indexes.js';

export type MirrorDatabase = BetterSQLite3Database<typeof schema>;

export interface OpenedDatabase {
  readonly sqlite: Database;
  readonly db: MirrorDatabase;
  close(): void;
}

/** For the writer (its folder exists): creates the file, sets WAL, migrates. */
export function openDatabase(path: string, options: WriterPragmaOptions = {}): OpenedDatabase {
  const opened = connectDatabase(path, options);
  try {
    // A first backfill killed before its end left its lookup indexes unbuilt: build them before
    // a migration may expect them (deferred-indexes.ts).
    buildDeferredIndexes(opened.sqlite);
    migrate(opened.db, { migrationsFolder: migrationsFolder() });
    return opened;
  } catch (error) {
    opened.sqlite.close();
    throw error;
  }
}

/** A writing connection with the writer's pragmas, to a file already migrated. */
export function connectDatabase(path: string, options: WriterPragmaOptions = {}): OpenedDatabase {
  placeTemporaryFilesBeside(path);
  const sqlite = new Database(path);
  try {
    applyWriterPragmas(sqlite, options);
    return { sqlite, db: drizzle(sqlite, { schema }), close: () => closeWriterConnection(sqlite) };
  } catch (error) {
    sqlite.close();
    throw error;
  }
}

/** For commands that only look (status, lookup): never writes, never migrates. */
export function openDatabaseReadOnly(path: string): OpenedDatabase {
  const sqlite = new Database(path, { readonly: true, fileMustExist: true });
  sqlite.pragma('busy_timeout = 5000');
  // A read-only connection never checkpoints, and closing it never removes the -wal/-shm files.
  const close = (): void => {
    if (sqlite.open) sqlite.close();
  };
  return { sqlite, db: drizzle(sqlite, { schema }), close };
}

/**
 * The writer's last close leaves the file in rollback (DELETE) journal mode when it can, so that a
 * `readonly` reader on a read-only mount still opens it: the last connection's close deletes the
 * -wal and -shm files, and without them SQLite cannot open a WAL-mode file read-only where it
 * cannot create them (SQLITE_CANTOPEN / SQLITE_READONLY_DIRECTORY; measured, SQLite 3.53). The
 * switch folds the WAL into the file first. It needs every other connection gone: while a reader
 * or a replicator (Litestream) is open it fails at once (busy_timeout 0: the shutdown never waits
 * behind a reader), and their open connections keep -wal and -shm in place, which is what such a
 * reader needs too. The writer sets WAL again when it starts (applyWriterPragmas).
 */
function closeWriterConnection(sqlite: Database): void {
  if (!sqlite.open) return;
  try {
    sqlite.pragma('busy_timeout = 0');
    sqlite.pragma('journal_mode = DELETE');
  } catch {
    // another connection is open: the WAL stays, and the next writer folds it in
  }
  sqlite.close();
}

/**
 * SQLite's temporary files (the sort of a deferred index build spills to one, deferred-indexes.ts)
 * go in the database's own folder unless SQLITE_TMPDIR says otherwise: a hardened container
 * (`docker run --read-only`) has no writable /tmp, and there the build failed with "disk I/O
 * error" (found by the container check). SQLite reads the variable once per process, at its first
 * temporary file, so it is set before any writing connection opens.
 */
function placeTemporaryFilesBeside(path: string): void {
  process.env.SQLITE_TMPDIR ??= dirname(resolve(path));
}

export function migrationsFolder(): string {
  return join(packageRoot(), 'drizzle');
}
