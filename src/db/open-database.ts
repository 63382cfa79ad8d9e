// Opens the SQLite file with the pragmas readers and the writer rely on, and applies migrations.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { packageRoot } from '../package-root.js';
import * as schema from './schema.js';

export type MirrorDatabase = BetterSQLite3Database<typeof schema>;

export interface OpenedDatabase {
  readonly sqlite: Database.Database;
  readonly db: MirrorDatabase;
  close(): void;
}

/** For the writer (its folder exists): creates the file, sets WAL, migrates. */
export function openDatabase(path: string): OpenedDatabase {
  const opened = connectDatabase(path);
  try {
    migrate(opened.db, { migrationsFolder: migrationsFolder() });
    return opened;
  } catch (error) {
    opened.sqlite.close();
    throw error;
  }
}

/** A writing connection with the writer's pragmas, to a file already migrated (the page-writer thread). */
export function connectDatabase(path: string): OpenedDatabase {
  const sqlite = new Database(path);
  try {
    // First: every later statement, these pragmas included, may meet the other connection's lock.
    sqlite.pragma('busy_timeout = 5000');
    // WAL lets readers in other processes read while a page commits, never seeing it half-written.
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    // Foreign keys document the schema but are not enforced: the one writer inserts parents
    // first, and the per-row check cost a fifth of write throughput (measured, 200,000 threats).
    sqlite.pragma('foreign_keys = OFF');
    // Checkpoint every ~40 MB of WAL rather than 4 MB: fewer, larger copies back into the file
    // (+35% write throughput measured); the size limit trims the WAL once a checkpoint is done,
    // also after a long-lived reader held checkpoints back.
    sqlite.pragma('wal_autocheckpoint = 10000');
    sqlite.pragma('journal_size_limit = 67108864');
    return { sqlite, db: drizzle(sqlite, { schema }), close: () => closeQuietly(sqlite) };
  } catch (error) {
    sqlite.close();
    throw error;
  }
}

/** For commands that only look (status, lookup): never writes, never migrates. */
export function openDatabaseReadOnly(path: string): OpenedDatabase {
  const sqlite = new Database(path, { readonly: true, fileMustExist: true });
  sqlite.pragma('busy_timeout = 5000');
  return { sqlite, db: drizzle(sqlite, { schema }), close: () => closeQuietly(sqlite) };
}

function closeQuietly(sqlite: Database.Database): void {
  if (!sqlite.open) return;
  try {
    // Leave a small WAL behind for the readers that stay.
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
  } catch {
    // a reader may hold the WAL; the next checkpoint will do
  }
  sqlite.close();
}

export function migrationsFolder(): string {
  return join(packageRoot(), 'drizzle');
}
