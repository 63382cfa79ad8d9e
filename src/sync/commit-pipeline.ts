// Pages of one window handed to the writer and not yet committed, oldest first.

/**
 * The walk fetches on while they commit, so a slow commit (a WAL checkpoint's fsync took 100–300 ms
 * here) does not stall every window's requests; a kill loses at most these pages, and the restart
 * fetches them again. Waiting pages also commit together, so the writer keeps up when the network
 * is fast: room for 32 lets a commit group ~100 pages of four windows (src/db/commit-queue.ts; 8
 * capped it near 10).
 */
const MAX_UNCOMMITTED_PAGES_PER_WINDOW = 32;

/**
 * And at most about this many characters of content waiting, beyond the window's latest page: a
 * page of large records (the service sets no limit on content) must not pile up in the capped
 * heaps of either thread. Pages of 100 records of 40 KB each crashed the process before this.
 */
export const MAX_UNCOMMITTED_CHARS_PER_WINDOW = 1_000_000;

export class CommitPipeline {
  readonly #pending: Array<{ readonly committed: Promise<void>; readonly chars: number }> = [];
  #chars = 0;
  #failure: { error: unknown } | undefined;

  /** Tracks a page's commit; a failure is thrown by the next throwIfFailed(), not as "unhandled". */
  add(commit: Promise<void>, chars: number): void {
    const committed = commit.catch((error: unknown) => {
      this.#failure ??= { error };
    });
    this.#pending.push({ committed, chars });
    this.#chars += chars;
  }

  /** Characters of content handed to the writer and not yet committed. */
  get chars(): number {
    return this.#chars;
  }

  throwIfFailed(): void {
    if (this.#failure) throw this.#failure.error;
  }

  /** Waits until there is room for another page; the latest page (`latestChars`) may always wait on its own, however large. */
  async makeRoom(latestChars: number): Promise<void> {
    while (this.#pending.length >= MAX_UNCOMMITTED_PAGES_PER_WINDOW || this.#chars - latestChars > MAX_UNCOMMITTED_CHARS_PER_WINDOW) {
      await this.#awaitOldest();
    }
  }

  /** Waits for every page, in order; throws the first failure. */
  async drain(): Promise<void> {
    while (this.#pending.length > 0) await this.#awaitOldest();
  }

  /** Waits for every page whatever happens: what was fetched before a stop still commits. */
  async settle(): Promise<void> {
    await Promise.all(this.#pending.map((page) => page.committed));
  }

  async #awaitOldest(): Promise<void> {
    const oldest = this.#pending.shift();
    if (!oldest) return;
    await oldest.committed;
    this.#chars -= oldest.chars;
    this.throwIfFailed();
  }
}
