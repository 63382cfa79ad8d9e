// The pragmas of the mirror's one writable connection (writer-connection.ts).
import { withSmallPageCache } from '../page-cache.js';
import type { Database } from '../sqlite.js';

/**
 * How long a start waits for the other connections to let go of a file at rest in rollback
 * (DELETE) journal mode: turning it to WAL needs every other connection gone, once. This version
 * leaves the file in WAL mode (writer-connection.ts), so only a file an older version stopped, or
 * a snapshot copied into place, waits here, and then only while a reader holds a read transaction.
 */
export const WAL_SWITCH_WAIT_MS = 60_000;

/** busy_timeout of the writer's connection: a replicator's write, a reader recovering the WAL index. */
const BUSY_TIMEOUT_MS = 5000;

export interface WalSwitch {
  /** The journal mode the file was at rest in. */
  readonly from: string;
  /** How long the switch waited for other connections. */
  readonly waitedMs: number;
}

export interface WriterPragmaOptions {
  /**
   * Whether this connection's commits fold the WAL into the file once it passes ~40 MB (PASSIVE:
   * never waits for a reader). Off when a replicator such as Litestream does the checkpoints.
   */
  readonly autoCheckpoint?: boolean;
  /** Told when the file was not at rest in WAL mode and was switched to it (a new file, or one an older version left). */
  readonly onWalSwitch?: ((switched: WalSwitch) => void) | undefined;
}

export function applyWriterPragmas(sqlite: Database, { autoCheckpoint = true, onWalSwitch }: WriterPragmaOptions = {}): void {
  // First: any later statement, these pragmas included, may meet another process's lock (a
  // replicator's write, a reader recovering the WAL index).
  sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  // WAL lets readers in other processes read while a page commits, never seeing it half-written.
  switchToWal(sqlite, onWalSwitch);
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
  // SQLite's 2 MB page cache, not better-sqlite3's 16 MB: the writer appends rows (a first sync
  // builds its indexes at the end, sorting through a file), and the operating system's cache holds
  // the file's pages anyway. The 16 MB only raised the peak: 1M `--backfill` 116 MB peak RSS
  // against 130-131, 19.1-21.2 s against 20.1-23.1 s (docs/performance.md, issue 41).
  withSmallPageCache(sqlite);
}

/**
 * A file at rest in WAL mode (as this version's close leaves it) needs nothing, and no lock: a
 * reader holding a read transaction never delays the start (7.7 ms beside one, against a failure
 * after busy_timeout for a file at rest in DELETE mode; measured, docs/readers-and-replicas.md).
 * Another mode is switched once, waiting up to WAL_SWITCH_WAIT_MS for other connections.
 */
function switchToWal(sqlite: Database, onWalSwitch: WriterPragmaOptions['onWalSwitch']): void {
  const from = sqlite.pragma('journal_mode', { simple: true }) as string;
  if (from === 'wal') return;
  const started = performance.now();
  sqlite.pragma(`busy_timeout = ${WAL_SWITCH_WAIT_MS}`);
  let mode: string;
  try {
    mode = sqlite.pragma('journal_mode = WAL', { simple: true }) as string;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'SQLITE_BUSY') throw error;
    mode = from;
  } finally {
    sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  }
  if (mode !== 'wal') {
    throw new Error(
      `the database file is at rest in ${from} journal mode (an older version's clean stop, or a copied snapshot) and another connection held it for ${WAL_SWITCH_WAIT_MS / 1000} s: ` +
        'switching it to WAL, once, needs every other connection to let go; end the reader that holds a read transaction (lsof or fuser on the file lists them) and run again',
    );
  }
  onWalSwitch?.({ from, waitedMs: Math.round(performance.now() - started) });
}
