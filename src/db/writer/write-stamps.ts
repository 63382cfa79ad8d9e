// The stamp of each write (first_seen_at, updated_at, removed_at, completed_at): the sender's clock,
// made strictly later than the stamp before, so `first_seen_at = stamp` marks exactly the rows one
// page inserted even when two pages commit within one millisecond.
export class WriteStamps {
  #lastMs = 0;

  /** `now`: the sender's clock (THREAT_MIRROR_NOW moves it in tests and replays). */
  next(now: string): string {
    const ms = Math.max(Date.parse(now), this.#lastMs + 1);
    this.#lastMs = ms;
    return new Date(ms).toISOString();
  }
}
