// The mirror's one writable connection: opened by the writer thread (and by tests that play the
// writer), with the writer's pragmas, the lookup indexes a killed first backfill left unbuilt, and
// the migrations; closed so that a read-only reader on a read-only mount can still open the file.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { packageRoot } from '../../lib/package-root.js';
import { buildDeferredIndexes } from '../sql/deferred-indexes.js';
import { Database } from '../sqlite.js';
import { placeTemporaryFilesBeside } from './temporary-files.js';
import { applyWriterPragmas, type WriterPragmaOptions } from './writer-pragmas.js';

export function migrationsFolder(): string {
  return join(packageRoot(), 'drizzle');
}

/** Creates the file if need be, sets WAL, builds deferred indexes, migrates. */
export async function openWriterConnection(path: string, options: WriterPragmaOptions = {}): Promise<Database> {
  placeTemporaryFilesBeside(dirname(resolve(path)));
  const sqlite = new Database(path);
  try {
    applyWriterPragmas(sqlite, options);
    // A first backfill killed before its end left its lookup indexes unbuilt: build them before
    // a migration may expect them (sql/deferred-indexes.ts).
    buildDeferredIndexes(sqlite);
    await migrate(sqlite);
    return sqlite;
  } catch (error) {
    sqlite.close();
    throw error;
  }
}

/**
 * drizzle's migrator, loaded only when a migration is pending: it applies every migration newer
 * than the last one recorded in __drizzle_migrations, which is what is checked here. A file
 * already migrated (every start but the first after an upgrade) never loads drizzle at all.
 */
async function migrate(sqlite: Database): Promise<void> {
  if (!migrationPending(sqlite)) return;
  const [{ drizzle }, { migrate: applyMigrations }] = await Promise.all([import('drizzle-orm/better-sqlite3'), import('drizzle-orm/better-sqlite3/migrator')]);
  applyMigrations(drizzle(sqlite), { migrationsFolder: migrationsFolder() });
}

function migrationPending(sqlite: Database): boolean {
  const journal = JSON.parse(readFileSync(join(migrationsFolder(), 'meta', '_journal.json'), 'utf8')) as { entries: Array<{ when: number }> };
  const newest = Math.max(...journal.entries.map((entry) => entry.when));
  const table = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get();
  if (table === undefined) return true;
  const last = sqlite.prepare('SELECT created_at FROM __drizzle_migrations ORDER BY created_at DESC LIMIT 1').pluck().get();
  return last === undefined || Number(last) < newest;
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
export function closeWriterConnection(sqlite: Database): void {
  if (!sqlite.open) return;
  try {
    sqlite.pragma('busy_timeout = 0');
    sqlite.pragma('journal_mode = DELETE');
  } catch {
    // another connection is open: the WAL stays, and the next writer folds it in
  }
  sqlite.close();
}
