// better-sqlite3 builds SQLite with a 16 MB page cache a connection (SQLITE_DEFAULT_CACHE_SIZE
// -16000), where SQLite's own default is 2 MB. A connection that reads a mirror through once, or
// sorts scratch rows, fills it to no purpose: sorting 400,000 hosts held ~16 MB more, and the
// `export` command's read connections filled theirs (peak RSS 148 -> 101 MB with 2 MB, measured;
// docs/performance.md). The operating system's cache keeps the file's pages anyway. The writer's
// connection takes it too (writer-pragmas.ts).
import type { Database } from './sqlite.js';

/** SQLite's default: 2,000 KiB (negative: a size, not pages). */
const SMALL_CACHE_KIB = -2000;

/** Gives the connection SQLite's usual 2 MB page cache; returns it. */
export function withSmallPageCache<T extends Database>(db: T): T {
  db.pragma(`cache_size = ${SMALL_CACHE_KIB}`);
  return db;
}
