// Read-only connections to the mirror: every thread but the writer's reads through one (the main
// thread, the HTTP thread, the snapshot and export threads, the read commands). Never writes,
// never migrates, never checkpoints, and closing one never removes the -wal/-shm files.
import { Database } from './sqlite.js';

export interface ReadOnlyConnection {
  readonly sqlite: Database;
  close(): void;
}

export function openDatabaseReadOnly(path: string): ReadOnlyConnection {
  const sqlite = new Database(path, { readonly: true, fileMustExist: true });
  sqlite.pragma('busy_timeout = 5000');
  return {
    sqlite,
    close: () => {
      if (sqlite.open) sqlite.close();
    },
  };
}
