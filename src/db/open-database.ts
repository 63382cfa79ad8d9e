// Read-only connections: every one the program opens is made here, to the mirror (every thread
// but the writer's reads through one: the main thread, the serving thread, the snapshot and export
// threads, the read commands), to the export index, to a snapshot being checked. Never writes,
// never migrates, never checkpoints, and closing one never removes the -wal/-shm files.
import { withSmallPageCache } from './page-cache.js';
import { Database } from './sqlite.js';

export interface ReadOnlyOptions {
  /** How long a read waits for a lock SQLite needs briefly (a WAL recovery); 0: it fails at once. */
  readonly busyTimeoutMs: number;
  /** SQLite's usual 2 MB page cache in place of better-sqlite3's 16 MB (page-cache.ts). */
  readonly smallPageCache?: boolean;
}

/** A read-only connection to the SQLite file at `path`, which must exist. */
export function openReadOnly(path: string, { busyTimeoutMs, smallPageCache = false }: ReadOnlyOptions): Database {
  const sqlite = new Database(path, { readonly: true, fileMustExist: true });
  try {
    if (busyTimeoutMs > 0) sqlite.pragma(`busy_timeout = ${busyTimeoutMs}`);
    return smallPageCache ? withSmallPageCache(sqlite) : sqlite;
  } catch (error) {
    sqlite.close();
    throw error;
  }
}

export interface ReadOnlyConnection {
  readonly sqlite: Database;
  close(): void;
}

export function openDatabaseReadOnly(path: string): ReadOnlyConnection {
  const sqlite = openReadOnly(path, { busyTimeoutMs: 5000 });
  return {
    sqlite,
    close: () => {
      if (sqlite.open) sqlite.close();
    },
  };
}
