// What a walk of a window saw: every id (what is not among them may have been unblocked), where
// each page began and ended (pages are id-ascending snapshots of the live list: a stored threat
// whose id falls inside a page was not listed when that page was read), and each day's digest as
// the records arrived, so the writer need not read the window back to record the ledger (reading
// and hashing every row again cost ~3 µs a row of the writer's ~20; measured).
import { addToDayDigests, type DayDigest } from '../db/content-hash.js';
import { addDays } from '../lib/days.js';
import type { Threat } from '../records.js';

/** One page of a walk by the ids it held: the page number (its cursor), its lowest and highest id. */
export interface PageBounds {
  readonly page: number;
  readonly first: number;
  readonly last: number;
  /** The window's last page: nothing was listed after it when it was read. */
  readonly final: boolean;
}

/** Where a walk resumed from a stored cursor took over: the page before the cursor, re-read and found unchanged. */
export interface ResumedAt {
  readonly page: number;
  readonly first: number;
  readonly last: number;
}

export class WindowSeen {
  readonly ids = new Set<number>();
  /** Pages that held at least one valid record, in the walk's order. */
  readonly pages: PageBounds[] = [];
  /**
   * For a walk resumed from a stored cursor: the last id the earlier process committed. Ids up to
   * it were walked by that process, and what it saw is not known here: nothing below is concluded.
   */
  readonly above: number | null;
  readonly #digests = new Map<string, DayDigest>();
  readonly #from: string;
  /** The day after the window's last: blocked_at below it is inside, as the writer's query has it. */
  readonly #until: string;
  #highest: number;
  #exact = true;

  constructor(windowStart: string, windowEnd: string, resumedAt?: ResumedAt) {
    this.#from = windowStart;
    this.#until = addDays(windowEnd, 1);
    this.above = resumedAt?.last ?? null;
    this.#highest = resumedAt?.last ?? -Infinity;
    if (resumedAt) this.pages.push({ ...resumedAt, final: false });
  }

  /**
   * Takes in a page. False when it overlaps the pages before it (an id at or below one already
   * seen): the list gained a record behind the walk, which this walk will not see.
   */
  add(threats: readonly Threat[], page: number, final: boolean): boolean {
    let low = Infinity;
    let high = -Infinity;
    for (const threat of threats) {
      if (threat.id < low) low = threat.id;
      if (threat.id > high) high = threat.id;
    }
    if (threats.length > 0 && low <= this.#highest) return false;
    for (const threat of threats) {
      // A repeated id within the page (the later copy is the one written) or a record outside the
      // window's days (stored under another day) would make the walk's digest differ from the
      // rows: the writer then reads the window back instead.
      if (this.ids.has(threat.id) || threat.blockedAt < this.#from || threat.blockedAt >= this.#until) this.#exact = false;
      this.ids.add(threat.id);
      if (this.#exact) addToDayDigests(this.#digests, threat);
    }
    // An empty page leaves no bounds: what lies past the page before it stays to be checked.
    if (threats.length > 0) {
      this.pages.push({ page, first: low, last: high, final });
      this.#highest = high;
    }
    return true;
  }

  /** Each day's digest of the records as received; null when they may not be what the rows hold. */
  get digests(): ReadonlyMap<string, DayDigest> | null {
    return this.#exact ? this.#digests : null;
  }
}
