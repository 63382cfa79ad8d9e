// The mirror's one writable connection: opened by the writer thread (and by tests that play the
// writer), with the writer's pragmas, the lookup indexes a killed first backfill left unbuilt, and
// the migrations; closed so that the file rests in WAL mode with its -wal and -shm files, which a
// read-only reader on a read-only mount needs, and the next start needs no lock a reader holds.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { packageRoot } from '../../lib/package-root.js';
import { buildDeferredIndexes } from '../sql/deferred-indexes.js';
import { openReadOnly } from '../open-database.js';
import { Database } from '../sqlite.js';
import { placeTemporaryFilesBeside } from './temporary-files.js';
import { checkpointWithoutWaiting } from './wal-checkpoint.js';
import { applyWriterPragmas, type WriterPragmaOptions } from './writer-pragmas.js';

export function migrationsFolder(): string {
  return join(packageRoot(), 'drizzle');
}

/** Creates the file if need be, sets WAL (options.onWalSwitch: when it was not), builds deferred indexes, migrates. */
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
 * The writer's close leaves the file in WAL mode, its WAL folded in and truncated when no reader
 * holds it (never waiting: busy_timeout 0), and the -wal and -shm files in place. The last
 * connection's close would delete them, and without them a `readonly` reader on a read-only mount
 * cannot open a WAL-mode file (SQLITE_READONLY_DIRECTORY; measured): so a read-only connection is
 * opened before the writer's close and closed after it. A read-only connection cannot take the
 * lock that deleting them needs, and leaves them (an empty -wal and the 32 KB -shm; measured).
 *
 * Leaving the file in rollback (DELETE) mode instead, as versions before did, made the next start
 * switch it back to WAL, which needs every other connection gone: a reader holding a read
 * transaction for longer than busy_timeout failed every start beside it (issue 40). A file at rest
 * in WAL mode needs no such lock (applyWriterPragmas). With a replicator doing the checkpoints
 * (`autoCheckpoint` false) the WAL is left as it is, for the replicator to fold in.
 */
export function closeWriterConnection(sqlite: Database, { autoCheckpoint = true }: { readonly autoCheckpoint?: boolean } = {}): void {
  if (!sqlite.open) return;
  if (autoCheckpoint) checkpointWithoutWaiting(sqlite);
  let keeper: Database | undefined;
  try {
    keeper = openReadOnly(sqlite.name, { busyTimeoutMs: 0 });
    // A read maps the -shm: the keeper is then a connection of the WAL, as a reader is.
    keeper.prepare('SELECT 1 FROM sqlite_master LIMIT 1').get();
  } catch {
    // Without a keeper the files go as before; a reader that can write the folder recreates them.
    keeper?.close();
    keeper = undefined;
  }
  sqlite.close();
  keeper?.close();
}
