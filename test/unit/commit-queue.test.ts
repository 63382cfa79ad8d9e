// When the writer thread commits (src/db/writer/commit-queue.ts): pages wait for others up to the
// interval, except a window's last page, a full batch (by pages or by characters), and pages that
// already waited for a commit.
import { describe, expect, it } from 'vitest';
import { CommitQueue, MAX_CHARS_PER_COMMIT, MAX_PAGES_PER_COMMIT, type QueuedPage } from '../../src/db/writer/commit-queue.js';
import type { PageInput } from '../../src/db/writer/page-writer.js';

const HOUR = 3_600_000;

function page(id: number, sentAt: number, nextPage: string | null = String(id + 1), content = ''): QueuedPage {
  const input = { nextPage, threats: [{ content }], rejected: [] } as unknown as PageInput;
  return { id, input, sentAt };
}

/** A queue whose commits are recorded, and a promise for the next one. */
function recorded(options: { intervalMs: number; now?: () => number }) {
  const batches: number[][] = [];
  let notify: (() => void) | undefined;
  const queue = new CommitQueue((batch) => {
    batches.push(batch.map((entry) => entry.id));
    notify?.();
  }, options);
  const nextCommit = (): Promise<void> => new Promise((resolve) => (notify = resolve));
  return { queue, batches, nextCommit };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('CommitQueue', () => {
  it('holds pages for the interval, so that they commit together', async () => {
    const clock = { now: 1000 };
    const { queue, batches } = recorded({ intervalMs: HOUR, now: () => clock.now });
    for (let id = 1; id <= 5; id += 1) queue.add(page(id, clock.now));
    await turn();
    await turn();
    expect(batches).toEqual([]);
    expect(queue.size).toBe(5);
    queue.flush();
    expect(batches).toEqual([[1, 2, 3, 4, 5]]);
    queue.flush();
    expect(batches).toHaveLength(1);
  });

  it("commits a window's last page at once, with every page queued before it", async () => {
    const { queue, batches, nextCommit } = recorded({ intervalMs: HOUR });
    const committed = nextCommit();
    queue.add(page(1, 0));
    queue.add(page(2, 0));
    queue.add(page(3, 0, null));
    await committed;
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('commits a full batch at once, before it takes the next page off the port', () => {
    const { queue, batches } = recorded({ intervalMs: HOUR });
    for (let id = 1; id <= MAX_PAGES_PER_COMMIT; id += 1) queue.add(page(id, 0));
    expect(batches).toHaveLength(1);
    expect(batches[0]).toHaveLength(MAX_PAGES_PER_COMMIT);
    expect(queue.size).toBe(0);
  });

  it('commits at once a batch whose records hold MAX_CHARS_PER_COMMIT characters, however few its pages', () => {
    const { queue, batches } = recorded({ intervalMs: HOUR });
    const large = 'x'.repeat(MAX_CHARS_PER_COMMIT / 4);
    for (let id = 1; id <= 9; id += 1) queue.add(page(id, 0, String(id + 1), large));
    // Four pages of a quarter each (and 256 characters a record more) fill one; the next four another.
    expect(batches).toEqual([
      [1, 2, 3, 4],
      [5, 6, 7, 8],
    ]);
    expect(queue.size).toBe(1);
    // A page larger than the bound commits alone.
    queue.flush();
    queue.add(page(10, 0, '11', 'x'.repeat(MAX_CHARS_PER_COMMIT + 1)));
    expect(batches.at(-1)).toEqual([10]);
  });

  it('commits at once the pages that were sent while the last commit ran (the writer is the bottleneck)', async () => {
    const clock = { now: 1000 };
    const { queue, batches, nextCommit } = recorded({ intervalMs: HOUR, now: () => clock.now });
    queue.add(page(1, clock.now));
    clock.now = 1050;
    queue.flush();
    expect(batches).toEqual([[1]]);
    // Sent at 1020, during that commit: it has waited already.
    const committed = nextCommit();
    queue.add(page(2, 1020));
    await committed;
    expect(batches).toEqual([[1], [2]]);
    // Sent after the commit ended: it waits for others again.
    queue.add(page(3, 1060));
    await turn();
    expect(batches).toEqual([[1], [2]]);
    queue.flush();
    expect(batches).toEqual([[1], [2], [3]]);
  });

  it('notes the end of a commit before it answers, so a page sent on the answer waits for others', async () => {
    const clock = { now: 1000 };
    let idle = 0;
    const batches: number[][] = [];
    const atThePort: QueuedPage[] = [];
    const queue = new CommitQueue(
      (batch) => {
        batches.push(batch.map((entry) => entry.id));
        clock.now += 5; // the transaction
        return batch.length;
      },
      {
        intervalMs: HOUR,
        now: () => clock.now,
        whileWaiting: () => {
          idle += 1;
        },
        answer: (batch, committed) => {
          expect(committed).toBe(batch.length);
          // The sender, woken by the answer, sends its next page before the writer goes on; the
          // writer takes it from its port after the commit.
          atThePort.push(page((batch.at(-1)?.id ?? 0) + 1, clock.now));
          clock.now += 3;
        },
      },
    );
    queue.add(page(1, clock.now));
    expect(idle).toBe(1);
    queue.flush();
    for (const sent of atThePort.splice(0)) queue.add(sent);
    await turn();
    // Page 2 was sent after the commit of page 1: it waits for others, with idle time for the writer.
    expect(batches).toEqual([[1]]);
    expect(queue.size).toBe(1);
    expect(idle).toBe(2);
    queue.flush();
    expect(batches).toEqual([[1], [2]]);
  });

  it('commits when the oldest page has waited the interval', async () => {
    const { queue, batches, nextCommit } = recorded({ intervalMs: 5 });
    const committed = nextCommit();
    queue.add(page(1, performance.timeOrigin + performance.now()));
    queue.add(page(2, performance.timeOrigin + performance.now()));
    await committed;
    expect(batches).toEqual([[1, 2]]);
  });

  it('gives the wait to whileWaiting once per commit, and never when pages commit at once', async () => {
    const clock = { now: 1000 };
    let idle = 0;
    const batches: number[][] = [];
    const queue = new CommitQueue((batch) => batches.push(batch.map((entry) => entry.id)), {
      intervalMs: HOUR,
      now: () => clock.now,
      whileWaiting: () => {
        idle += 1;
      },
    });
    queue.add(page(1, clock.now));
    queue.add(page(2, clock.now));
    expect(idle).toBe(1);
    queue.flush();
    // A window's last page does not wait: no idle time.
    queue.add(page(3, 2000, null));
    expect(idle).toBe(1);
    await turn();
    expect(batches).toEqual([[1, 2], [3]]);
    queue.add(page(4, 3000));
    expect(idle).toBe(2);
    queue.flush();
  });
});
