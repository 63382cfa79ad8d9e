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
  const sqlite = new Database(path);
  try {
    // WAL lets readers in other processes read while a page commits, never seeing it half-written.
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    // A long-lived reader stops checkpoints; cap what the WAL keeps once they resume.
    sqlite.pragma('journal_size_limit = 67108864');
    const db = drizzle(sqlite, { schema });
    migrate(db, { migrationsFolder: migrationsFolder() });
    return { sqlite, db, close: () => closeQuietly(sqlite) };
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
