// The writer session's close: every releaser runs, last acquired first, whatever the others throw.
import { describe, expect, it } from 'vitest';
import { Database } from '../../src/db/sqlite.js';
import { acquireWriterLock } from '../../src/db/writer-lock.js';
import { type Releaser, releaseAll } from '../../src/lib/release-all.js';
import { tempDbPath } from '../support/temp.js';

describe('releaseAll', () => {
  it('runs every releaser past ones that throw, then throws the first error: the database and the writer lock end up closed', async () => {
    const dbPath = tempDbPath();
    const lock = acquireWriterLock(dbPath);
    const db = new Database(dbPath);
    const order: string[] = [];
    const releasers: Releaser[] = [
      () => {
        lock.release();
        order.push('lock');
      },
      () => {
        db.close();
        order.push('database');
      },
      async () => {
        order.push('thread');
        await Promise.reject(new Error('the writer thread did not stop'));
      },
      () => {
        order.push('last');
        throw new Error('the last releaser failed first');
      },
    ];
    await expect(releaseAll(releasers)).rejects.toThrow('the last releaser failed first');
    expect(order).toEqual(['last', 'thread', 'database', 'lock']);
    expect(db.open).toBe(false);
    // The lock is free: the next writer takes it.
    expect(() => acquireWriterLock(dbPath).release()).not.toThrow();
    // Each ran once: the list is emptied, a second call releases nothing twice.
    await releaseAll(releasers);
    expect(order).toHaveLength(4);
  });
});
