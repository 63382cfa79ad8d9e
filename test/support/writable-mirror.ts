// A writable, migrated connection to a mirror file, for tests and benchmarks that play the writer
// thread's part on their own thread (the program itself writes only from its writer thread).
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { Database } from '../../src/db/sqlite.js';
import { closeWriterConnection, migrationsFolder, openWriterConnection } from '../../src/db/writer/writer-connection.js';
import { applyWriterPragmas } from '../../src/db/writer/writer-pragmas.js';

export interface WritableMirror {
  readonly sqlite: Database;
  close(): void;
}

export async function openWritableMirror(path: string, options: { autoCheckpoint?: boolean } = {}): Promise<WritableMirror> {
  const sqlite = await openWriterConnection(path, options);
  return { sqlite, close: () => closeWriterConnection(sqlite) };
}

/**
 * The same, synchronously, for helpers that write a file before a test reads it: drizzle's migrator
 * loaded up front (the writer thread loads it only when a migration is pending).
 */
export function openWritableMirrorSync(path: string): WritableMirror {
  const sqlite = new Database(path);
  applyWriterPragmas(sqlite);
  migrate(drizzle(sqlite), { migrationsFolder: migrationsFolder() });
  return { sqlite, close: () => closeWriterConnection(sqlite) };
}
