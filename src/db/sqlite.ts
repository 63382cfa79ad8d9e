// The SQLite driver, chosen by the running Node major: every connection of the program is made here.
//
// better-sqlite3 12 wraps its objects with Node's classic ObjectWrap. On Node 24 that header's
// destructor asserts a current Environment, and a garbage collection that runs outside one (V8's
// own GC tasks, worker teardown) finalizes a Statement there: the process aborts (SIGABRT, exit
// 134; seen here on 45 of 79 tests, and reported upstream in WiseLibs/better-sqlite3#1515, closed
// without a fix). better-sqlite3 13 moved to Node-API and does not abort, but needs Node 22: on
// Node 20 it segfaults when the first database opens. Both are installed (13 under the alias
// better-sqlite3-napi, with prebuilt binaries and no compile step) and the running Node picks one;
// drizzle only wraps the connection it is given, so it works over either.
import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type BetterSqlite3 from 'better-sqlite3';

const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

/** better-sqlite3 13 on Node 22 and later, 12 on Node 20. */
export const SQLITE_DRIVER = NODE_MAJOR >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';

// The two have the same API; the types of 12 describe both.
export const Database = createRequire(import.meta.url)(SQLITE_DRIVER) as typeof BetterSqlite3;
export type Database = BetterSqlite3.Database;
export type Statement = BetterSqlite3.Statement;

/** Statements prepared once, by name. */
export type Statements<Name extends string> = { readonly [Key in Name]: Statement };

/** Prepares each statement of `sql` on this connection: one object in place of a field per statement. */
export function prepareAll<const T extends Record<string, string>>(sqlite: Database, sql: T): Statements<Extract<keyof T, string>> {
  return Object.fromEntries(Object.entries(sql).map(([name, text]) => [name, sqlite.prepare(text)])) as Statements<Extract<keyof T, string>>;
}

/** The statement, or undefined on a file the writer of this version has not migrated yet (it lacks the newer tables or columns): its readers show none. */
export function prepareIfMigrated(sqlite: Database, query: string): Statement | undefined {
  try {
    return sqlite.prepare(query);
  } catch {
    return undefined;
  }
}

/**
 * Frees, before a thread ends, the native part of this thread's connections and statements that
 * nothing references any more. better-sqlite3 12's ObjectWrap frees its C++ objects only when a
 * garbage collection finds their JS objects unreachable, and a thread's teardown runs none: each
 * daemon run's threads (the writer's, the export job's) left ~13 KB behind on Node 20, and the
 * daemon grew without bound (docs/performance.md, "Memory over many runs"). Node-API (13, Node 22
 * on) finalizes them at teardown itself: nothing to do there. Call it from a callback of its own
 * (no frame of the work above it), after the last connection is closed.
 */
export function releaseUnreachable(): void {
  if (SQLITE_DRIVER !== 'better-sqlite3') return;
  collectGarbage ??= exposedGc();
  collectGarbage();
}

let collectGarbage: (() => void) | undefined;

/** V8's full collection, as --expose-gc offers it, without the flag on the command line (nor on for contexts made later). */
function exposedGc(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed !== undefined) return exposed;
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  setFlagsFromString('--no-expose-gc');
  return gc;
}
