// WAL checkpoints that never wait for a lock, on the writer's connection: between runs, and while pages wait for their commit.
import type { Database } from '../sqlite.js';

/** What one checkpoint did; `complete` means the WAL was folded into the file and truncated. */
export interface WalCheckpoint {
  readonly complete: boolean;
  /** Frames in the WAL and frames copied into the file, as SQLite reports them (-1: no WAL). */
  readonly walFrames: number;
  readonly checkpointedFrames: number;
  readonly error?: string;
}

/**
 * PASSIVE first: it copies every frame no reader still needs and takes no lock a writer or reader
 * waits for. Then TRUNCATE with busy_timeout 0: when no reader holds the WAL it empties the file;
 * when one does, SQLite gives up at once (busy) instead of waiting busy_timeout for the reader,
 * which is what froze the daemon behind Litestream and long report queries before (issue 13).
 */
export function checkpointWithoutWaiting(sqlite: Database): WalCheckpoint {
  const busyTimeout = sqlite.pragma('busy_timeout', { simple: true }) as number;
  sqlite.pragma('busy_timeout = 0');
  try {
    sqlite.pragma('wal_checkpoint(PASSIVE)');
    const [row] = sqlite.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number; log: number; checkpointed: number }>;
    return { complete: row?.busy === 0, walFrames: row?.log ?? -1, checkpointedFrames: row?.checkpointed ?? -1 };
  } catch (error) {
    // SQLITE_BUSY: another connection (a replicator) is checkpointing right now.
    return { complete: false, walFrames: -1, checkpointedFrames: -1, error: (error as Error).message };
  } finally {
    sqlite.pragma(`busy_timeout = ${busyTimeout}`);
  }
}

/**
 * Copies into the file the WAL frames no reader still needs (PASSIVE), without waiting for any
 * lock: done while the writer would idle, it leaves less for the fold at the close, which the run
 * waits for (~145 ms of a 20,000-threat backfill, measured). Returns false when it could not run.
 */
export function foldWalWithoutWaiting(sqlite: Database): boolean {
  const busyTimeout = sqlite.pragma('busy_timeout', { simple: true }) as number;
  sqlite.pragma('busy_timeout = 0');
  try {
    sqlite.pragma('wal_checkpoint(PASSIVE)');
    return true;
  } catch {
    // SQLITE_BUSY: another connection (a replicator) is checkpointing right now.
    return false;
  } finally {
    sqlite.pragma(`busy_timeout = ${busyTimeout}`);
  }
}
