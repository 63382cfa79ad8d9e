// The pragmas of the mirror's one writable connection (writer-connection.ts).
import type { Database } from '../sqlite.js';

export interface WriterPragmaOptions {
  /**
   * Whether this connection's commits fold the WAL into the file once it passes ~40 MB (PASSIVE:
   * never waits for a reader). Off when a replicator such as Litestream does the checkpoints.
   */
  readonly autoCheckpoint?: boolean;
}

export function applyWriterPragmas(sqlite: Database, { autoCheckpoint = true }: WriterPragmaOptions = {}): void {
  // First: any later statement, these pragmas included, may meet another process's lock (a
  // replicator's write, a reader recovering the WAL index).
  sqlite.pragma('busy_timeout = 5000');
  // WAL lets readers in other processes read while a page commits, never seeing it half-written.
  // The writer's last close leaves the file in DELETE mode (see open-database.ts): this sets it back.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  // Foreign keys document the schema but are not enforced: the one writer inserts parents
  // first, and the per-row check cost a fifth of write throughput (measured, 200,000 threats).
  sqlite.pragma('foreign_keys = OFF');
  // Checkpoint every ~40 MB of WAL rather than 4 MB: fewer, larger copies back into the file
  // (+35% write throughput measured); the size limit trims the WAL once a checkpoint is done,
  // also after a long-lived reader held checkpoints back. These automatic checkpoints are
  // PASSIVE: they never wait for a reader.
  sqlite.pragma(`wal_autocheckpoint = ${autoCheckpoint ? 10000 : 0}`);
  sqlite.pragma('journal_size_limit = 67108864');
}
