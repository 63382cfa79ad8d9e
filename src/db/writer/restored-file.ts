// A file restored from a replica (session/replica-restore.ts), checked before it takes the
// database's place: whole (SQLite's integrity check), a mirror (the tables every version has),
// and of a schema this version knows (migrations then bring it up to date): never a newer one.
// Then it forgets its primary's change feed, before it is renamed into place.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openReadOnly } from '../open-database.js';
import { FEED_ID_KEY } from '../setting-keys.js';
import { Database } from '../sqlite.js';
import { MirrorSettings } from '../sql/settings.js';
import { migrationsFolder } from './writer-connection.js';

/** Tables every version of the mirror has had since its first migration. */
const MIRROR_TABLES = ['threats', 'organization_threats', 'sync_checkpoints', 'sync_runs', '__drizzle_migrations'];

/** What is wrong with the restored file, or undefined when it may be used. */
export function restoredFileProblem(path: string): string | undefined {
  const sqlite = openReadOnly(path, { busyTimeoutMs: 0 });
  try {
    const integrity = sqlite.prepare('PRAGMA integrity_check').pluck().all() as string[];
    if (integrity.length !== 1 || integrity[0] !== 'ok') return `the integrity check failed: ${integrity.slice(0, 3).join('; ')}`;
    const tables = new Set(sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]);
    const missing = MIRROR_TABLES.filter((table) => !tables.has(table));
    if (missing.length > 0) return `it is not a threat-mirror database (no table ${missing.join(', ')})`;
    const journal = JSON.parse(readFileSync(join(migrationsFolder(), 'meta', '_journal.json'), 'utf8')) as { entries: Array<{ when: number; tag: string }> };
    const known = new Set(journal.entries.map((entry) => entry.when));
    const unknown = (sqlite.prepare('SELECT created_at FROM __drizzle_migrations').pluck().all() as Array<number | string>).filter((when) => !known.has(Number(when)));
    if (unknown.length > 0) return `it was migrated by a newer threat-mirror (${unknown.length} migrations this version does not know): upgrade this one`;
    return undefined;
  } finally {
    sqlite.close();
  }
}

/**
 * Takes the primary's change-feed id out of the copy, so the writer gives it one of its own
 * (mirror-writer.ts): the copy may lack changes the primary's readers saw after the replica's last
 * sync, and a reader that kept its place in the primary's feed must start over. Done in the copy,
 * before its rename: a start killed at any instant after it leaves a file without the primary's id.
 */
export function forgetPrimaryFeed(path: string): void {
  const sqlite = new Database(path, { fileMustExist: true });
  try {
    const hasSettings = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'mirror_settings'").get() !== undefined;
    if (hasSettings) new MirrorSettings(sqlite).delete(FEED_ID_KEY);
    // Into the file itself: the WAL beside the copy is removed before the rename.
    const [checkpoint] = sqlite.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
    if (checkpoint !== undefined && checkpoint.busy !== 0) throw new Error('the copy could not be checkpointed');
  } finally {
    sqlite.close();
  }
}
