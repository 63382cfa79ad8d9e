// Room in the writer thread's capped heap for the pages handed to it and not yet answered, across
// every window and organization of the process. Each window bounds its own uncommitted pages
// (sync/commit-pipeline.ts), but the thread holds every window's at once while they wait to
// commit together: two organizations backfilling 100,000 threats each, eight windows in flight,
// ended the thread on its 16 MB heap in about half the runs (docs/performance.md, "Room in the
// writer's heap"). A page waits here, first come first served (a window's pages keep their
// order), until it fits; one alone always fits.

/** Characters a page holds, roughly: its contents and a little for each record's other fields. */
export function pageChars(page: { readonly threats: ReadonlyArray<{ readonly content: string }>; readonly rejected: readonly unknown[] }): number {
  let chars = 256 * page.rejected.length;
  for (const threat of page.threats) chars += 256 + threat.content.length;
  return chars;
}

/**
 * Characters of unanswered pages per MB of the thread's old generation: a page's threats, their
 * lookup columns and the statements' copies take ~3 bytes of heap per character counted, and the
 * connection's own work needs the rest.
 */
const CHARS_PER_HEAP_MB = 2 ** 20 / 4;

export class PageRoom {
  readonly #limit: number;
  #used = 0;
  readonly #waiting: Array<{ readonly chars: number; readonly enter: () => void }> = [];

  /** For a thread whose old generation is capped at `heapMb`. */
  constructor(heapMb: number) {
    this.#limit = heapMb * CHARS_PER_HEAP_MB;
  }

  /** Resolves once the page fits, after every page that asked before it. */
  async enter(chars: number): Promise<void> {
    if (this.#waiting.length === 0 && this.#fits(chars)) {
      this.#used += chars;
      return;
    }
    await new Promise<void>((enter) => this.#waiting.push({ chars, enter }));
  }

  /** The page was answered (committed or failed): its room goes to the pages waiting, in order. */
  leave(chars: number): void {
    this.#used -= chars;
    for (let next = this.#waiting[0]; next !== undefined && this.#fits(next.chars); next = this.#waiting[0]) {
      this.#waiting.shift();
      this.#used += next.chars;
      next.enter();
    }
  }

  #fits(chars: number): boolean {
    return this.#used === 0 || this.#used + chars <= this.#limit;
  }
}
