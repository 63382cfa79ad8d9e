// One writer per database file, held by an OS file lock so a crashed process never keeps it.
//
// The lock is an exclusive SQLite transaction on a small side file: the kernel drops it when the
// process dies, however it dies, and the main file stays free for readers.
import { writerLockPathOf } from './database-files.js';
import { Database } from './sqlite.js';

export class WriterLockError extends Error {
  override readonly name = 'WriterLockError';
}

export interface WriterLock {
  release(): void;
}

export function acquireWriterLock(dbPath: string): WriterLock {
  const lockPath = writerLockPathOf(dbPath);
  const lock = new Database(lockPath);
  try {
    lock.pragma('busy_timeout = 0');
    // Nothing is ever written to the lock file: a journal on disk would only be litter after a crash.
    lock.pragma('journal_mode = MEMORY');
    lock.pragma('locking_mode = EXCLUSIVE');
    lock.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    lock.close();
    const code = (error as { code?: string }).code;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
      throw new WriterLockError(
        `another threat-mirror process is already writing ${dbPath} (lock ${lockPath}); run one writer per database file`,
      );
    }
    throw error;
  }
  return {
    release: () => {
      if (lock.open) lock.close();
    },
  };
}
