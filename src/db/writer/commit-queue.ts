// When the writer thread commits pages: group commit by time as well as by page.
//
// Every commit writes each B-tree page it dirtied to the WAL once, whatever the number of rows
// that dirtied it. A threat goes into ~8 B-trees at random places (content, host, address, e-mail,
// the change feed, the organization link, the full-text index), so a commit of 10 pages dirties
// almost as many index pages as one of 100, and per row the larger commit costs about half
// (measured, docs/performance.md). Pages therefore wait up to COMMIT_INTERVAL_MS for others to
// join them; each still moves its own window's cursor in the same transaction, so a kill loses at
// most the pages of the last interval, and the next run fetches exactly those again.
//
// A window's last page commits at once, with whatever waits beside it: its walk waits for that
// commit before it takes the next window, and on a slow network an interval there would be idle
// time. So does a full batch, and everything before a WAL checkpoint or the close.
//
// While pages wait for the interval the writer has nothing else to do: `whileWaiting` gives that
// time to other work (the thread folds the WAL into the file then, see mirror-writer.ts).
import type { PageInput } from './page-writer.js';

/** How long a page may wait for others before its commit: the crash bound in time. */
export const COMMIT_INTERVAL_MS = 100;
/** Pages of one commit at most (~12,800 records): beyond ~100 the gain per page is gone (measured). */
export const MAX_PAGES_PER_COMMIT = 128;
/**
 * And at most about this many characters (pageChars): the thread's heap (16 MB) holds the pages
 * queued, and a batch this full commits at once, before the port hands over the next message.
 * Each window bounded its own pages only: with four organizations backfilling, pages of sixteen
 * windows queued up behind a commit and ended the thread (docs/performance.md, "Room in the
 * writer's heap"). A page larger than this commits alone.
 */
export const MAX_CHARS_PER_COMMIT = 2_000_000;

/** Characters a page holds, roughly: its contents and a little for each record's other fields. */
export function pageChars(page: { readonly threats: ReadonlyArray<{ readonly content: string }>; readonly rejected: readonly unknown[] }): number {
  let chars = 256 * page.rejected.length;
  for (const threat of page.threats) chars += 256 + threat.content.length;
  return chars;
}

export interface QueuedPage {
  readonly id: number;
  readonly input: PageInput;
  /** When the main thread sent it (epoch ms, performance.timeOrigin + now()): the two threads share this clock. */
  readonly sentAt: number;
}

export class CommitQueue<Outcome = void> {
  readonly #commit: (batch: readonly QueuedPage[]) => Outcome;
  readonly #answer: (batch: readonly QueuedPage[], outcome: Outcome) => void;
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #whileWaiting: () => void;
  #queued: QueuedPage[] = [];
  /** pageChars of the queued pages. */
  #queuedChars = 0;
  /** When the oldest queued page was sent. */
  #oldestAt = 0;
  /** When the last commit ended: a page sent before that waited at the port while it ran. */
  #lastCommitEnd = -Infinity;
  #timer: NodeJS.Timeout | undefined;
  #immediate: NodeJS.Immediate | undefined;

  /**
   * `commit` writes a batch in one transaction; `answer` then tells each page's sender. `whileWaiting`
   * runs when queued pages start to wait for others (at most once per commit): idle time, until the
   * interval ends or more pages arrive.
   *
   * The queue notes the commit's end between the two. A page sent after its sender had the answer
   * was sent after the commit, and waits for others like any page. Were the end noted after the
   * answers, a sender woken by one could send its next page before the writer noted it (on a busy
   * machine the scheduler runs the woken thread first), and that page would count as one that
   * waited for the commit: it would commit at once, alone, and `whileWaiting` would never run.
   */
  constructor(
    commit: (batch: readonly QueuedPage[]) => Outcome,
    {
      answer = (): void => {},
      intervalMs = COMMIT_INTERVAL_MS,
      now = epochMs,
      whileWaiting = (): void => {},
    }: { answer?: (batch: readonly QueuedPage[], outcome: Outcome) => void; intervalMs?: number; now?: () => number; whileWaiting?: () => void } = {},
  ) {
    this.#commit = commit;
    this.#answer = answer;
    this.#intervalMs = intervalMs;
    this.#now = now;
    this.#whileWaiting = whileWaiting;
  }

  get size(): number {
    return this.#queued.length;
  }

  add(page: QueuedPage): void {
    if (this.#queued.length === 0) {
      this.#oldestAt = page.sentAt;
      this.#queuedChars = 0;
    }
    this.#queued.push(page);
    this.#queuedChars += pageChars(page.input);
    // A full batch commits now: the port holds the rest serialized, off this heap, until it returns.
    if (this.#queued.length >= MAX_PAGES_PER_COMMIT || this.#queuedChars >= MAX_CHARS_PER_COMMIT) return this.flush();
    // A page sent while the last commit ran has waited already: the writer is the bottleneck, and
    // what queued up meanwhile is the group. Soon rather than now: the rest of it is at the port.
    const waitedForCommit = this.#oldestAt < this.#lastCommitEnd;
    if (waitedForCommit || page.input.nextPage === null) this.#commitSoon();
    else this.#commitWithin(this.#intervalMs - (this.#now() - this.#oldestAt));
  }

  /** Commits everything queued now (before a WAL checkpoint, a close). */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#immediate) clearImmediate(this.#immediate);
    this.#immediate = undefined;
    const batch = this.#queued;
    if (batch.length === 0) return;
    this.#queued = [];
    let outcome: Outcome;
    try {
      outcome = this.#commit(batch);
    } finally {
      this.#lastCommitEnd = this.#now();
    }
    this.#answer(batch, outcome);
  }

  #commitSoon(): void {
    this.#immediate ??= setImmediate(() => this.flush());
  }

  #commitWithin(ms: number): void {
    if (this.#immediate || this.#timer) return;
    if (ms <= 0) {
      this.#commitSoon();
      return;
    }
    this.#timer = setTimeout(() => this.flush(), ms);
    this.#whileWaiting();
  }
}

/** Milliseconds since the epoch, sub-millisecond, on the same clock in every thread. */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}
