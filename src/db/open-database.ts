// Opens the SQLite file with the pragmas readers and the writer rely on, and applies migrations.
import { join } from 'node:path';
import { Database } from './sqlite.js';
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { packageRoot } from '../package-root.js';
import * as schema from './schema.js';
import { applyWriterPragmas } from './writer-pragmas.js';

export type MirrorDatabase = BetterSQLite3Database<typeof schema>;

export interface OpenedDatabase {
  readonly sqlite: Database;
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

/** A writing connection with the writer's pragmas, to a file already migrated. */
export function connectDatabase(path: string): OpenedDatabase {
  const sqlite = new Database(path);
  try {
    applyWriterPragmas(sqlite);
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

function closeQuietly(sqlite: Database): void {
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
