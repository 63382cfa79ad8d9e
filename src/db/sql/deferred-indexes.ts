// The first backfill into an empty mirror builds the lookup indexes once, at its end (or earlier
// when the writer waits on a slow service: see writer/writer-thread.ts), instead of row by row: each
// threat goes into two or three of them at a random place, and kept in step per row they cost more
// than the rest of the write (docs/performance.md); CREATE INDEX sorts once.
//
// Until they are built, every lookup still answers exactly (SQLite scans the table instead of
// searching an index), only slower; the full-text index, the change feed and the ledger are kept
// in step as always. Their definitions wait in mirror_settings (key `deferred_index:<name>`), so
// a process killed mid-way leaves them recorded, and the next writer to open the file builds them
// before it migrates or writes (writer/writer-connection.ts).
import { DEFERRED_INDEX_KEY_PREFIX, keyRangeOf } from '../setting-keys.js';
import type { Database } from '../sqlite.js';
import { MirrorSettings } from './settings.js';

/** The random-key indexes on threats; not threats_blocked_at and threats_change_seq (a window's end and the feed read them). */
export const DEFERRABLE_INDEXES = [
  'threats_content',
  'threats_host',
  'threats_registrable_domain',
  'threats_address',
  'threats_email',
  'threats_email_domain',
  'threats_url_expression',
] as const;

/**
 * When threats is empty and nothing is deferred yet: drops the lookup indexes, recording their
 * definitions, in one transaction. Returns how many were deferred.
 */
export function deferLookupIndexes(sqlite: Database, now: string): number {
  return sqlite
    .transaction((): number => {
      if (sqlite.prepare('SELECT 1 FROM threats LIMIT 1').get() !== undefined) return 0;
      if (deferredIndexes(sqlite).length > 0) return 0;
      const placeholders = DEFERRABLE_INDEXES.map(() => '?').join(', ');
      const indexes = sqlite
        .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'threats' AND sql IS NOT NULL AND name IN (${placeholders})`)
        .all(...DEFERRABLE_INDEXES) as Array<{ name: string; sql: string }>;
      const settings = new MirrorSettings(sqlite);
      for (const { name, sql } of indexes) {
        settings.record(DEFERRED_INDEX_KEY_PREFIX + name, sql, now);
        sqlite.exec(`DROP INDEX ${quoteIdentifier(name)}`);
      }
      return indexes.length;
    })
    .immediate();
}

/**
 * Builds the deferred indexes and forgets them, in one transaction. Returns how many it built.
 * The sort spills to a temporary file, not memory (the page writer keeps temporary data in
 * memory): sorting 200,000 rows in memory alone took the process over 150 MB RSS.
 */
export function buildDeferredIndexes(sqlite: Database): number {
  if (deferredIndexes(sqlite).length === 0) return 0;
  const tempStore = sqlite.pragma('temp_store', { simple: true }) as number;
  const cacheSize = sqlite.pragma('cache_size', { simple: true }) as number;
  const threads = sqlite.pragma('threads', { simple: true }) as number;
  sqlite.pragma('temp_store = FILE');
  // The sort keeps up to cache_size in memory before it spills.
  sqlite.pragma('cache_size = -2000');
  // Helper threads sort parts of each index at once: at the end of a run the other core is idle.
  // 1,000,000 threats: 2.18-2.23 s without them, 1.68-1.86 s with two, memory unchanged (measured).
  sqlite.pragma('threads = 2');
  try {
    return buildNow(sqlite);
  } finally {
    sqlite.pragma(`temp_store = ${tempStore}`);
    sqlite.pragma(`cache_size = ${cacheSize}`);
    sqlite.pragma(`threads = ${threads}`);
  }
}

function buildNow(sqlite: Database): number {
  return sqlite
    .transaction((): number => {
      const deferred = deferredIndexes(sqlite);
      if (deferred.length === 0) return 0;
      const exists = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?");
      for (const { name, sql } of deferred) {
        if (exists.get(name) === undefined) sqlite.exec(sql);
      }
      new MirrorSettings(sqlite).deleteWithPrefix(DEFERRED_INDEX_KEY_PREFIX);
      return deferred.length;
    })
    .immediate();
}

/** The indexes waiting to be built: their names and definitions. */
export function deferredIndexes(sqlite: Database): Array<{ name: string; sql: string }> {
  const hasSettings = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'mirror_settings'").get() !== undefined;
  if (!hasSettings) return [];
  const { from, below } = keyRangeOf(DEFERRED_INDEX_KEY_PREFIX);
  const rows = sqlite.prepare('SELECT key, value FROM mirror_settings WHERE key >= ? AND key < ? ORDER BY key').all(from, below) as Array<{ key: string; value: string }>;
  return rows.map((row) => ({ name: row.key.slice(DEFERRED_INDEX_KEY_PREFIX.length), sql: row.value }));
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
