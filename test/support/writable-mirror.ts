// A writable, migrated connection to a mirror file, for tests and benchmarks that play the writer
// thread's part on their own thread (the program itself writes only from its writer thread).
import type { Database } from '../../src/db/sqlite.js';
import { closeWriterConnection, openWriterConnection } from '../../src/db/writer/writer-connection.js';

export interface WritableMirror {
  readonly sqlite: Database;
  close(): void;
}

export async function openWritableMirror(path: string, options: { autoCheckpoint?: boolean } = {}): Promise<WritableMirror> {
  const sqlite = await openWriterConnection(path, options);
  return { sqlite, close: () => closeWriterConnection(sqlite) };
}
