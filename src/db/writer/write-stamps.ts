// The stamp of each write (first_seen_at, updated_at, removed_at, completed_at): the sender's clock,
// made strictly later than the stamp before, so `first_seen_at = stamp` marks exactly the rows one
// page inserted even when two pages commit within one millisecond.
export class WriteStamps {
  #lastMs: number;

  /** `afterMs`: the last stamp of the thread before this one in the same process (a daemon's writer stops between runs). */
  constructor(afterMs = 0) {
    this.#lastMs = afterMs;
  }

  /** The last stamp given, in epoch ms (0 before the first). */
  get lastMs(): number {
    return this.#lastMs;
  }

  /** `now`: the sender's clock (THREAT_MIRROR_NOW moves it in tests and replays). */
  next(now: string): string {
    const ms = Math.max(Date.parse(now), this.#lastMs + 1);
    this.#lastMs = ms;
    return new Date(ms).toISOString();
  }
}
