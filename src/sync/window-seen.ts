// What a walk from a window's first page saw: every id (what is not among them was unblocked), and
// each day's digest as the records arrived, so the writer need not read the window back to record
// the ledger (reading and hashing every row again cost ~3 µs a row of the writer's ~20; measured).
import { addToDayDigests, type DayDigest } from '../db/content-hash.js';
import { addDays } from '../lib/days.js';
import type { Threat } from '../records.js';

export class WindowSeen {
  readonly ids = new Set<number>();
  readonly #digests = new Map<string, DayDigest>();
  readonly #from: string;
  /** The day after the window's last: blocked_at below it is inside, as the writer's query has it. */
  readonly #until: string;
  #exact = true;

  constructor(windowStart: string, windowEnd: string) {
    this.#from = windowStart;
    this.#until = addDays(windowEnd, 1);
  }

  add(threats: readonly Threat[]): void {
    for (const threat of threats) {
      // A repeated id (the later copy is the one written) or a record outside the window's days
      // (stored under another day) would make the walk's digest differ from the rows: the writer
      // then reads the window back instead.
      if (this.ids.has(threat.id) || threat.blockedAt < this.#from || threat.blockedAt >= this.#until) this.#exact = false;
      this.ids.add(threat.id);
      if (this.#exact) addToDayDigests(this.#digests, threat);
    }
  }

  /** Each day's digest of the records as received; null when they may not be what the rows hold. */
  get digests(): ReadonlyMap<string, DayDigest> | null {
    return this.#exact ? this.#digests : null;
  }
}
