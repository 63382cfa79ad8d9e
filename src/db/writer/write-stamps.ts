// The stamp of each write (first_seen_at, updated_at, removed_at, completed_at): the sender's clock,
// made strictly later than the stamp before in this process, so the stamps of one process's writes
// are in the order of the writes, two pages within one millisecond included. Across processes no
// order holds (a replica's primary, a clock set back, a test's fixed clock): no write tells an
// insert from an update by its stamp (threat-rows.ts).
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
