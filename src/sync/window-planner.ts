// Cuts a run's range into windows as workers ask for them, sized by the density seen so far.
//
// A window costs one request more than its records need (the last, partial page), so windows
// should be few; workers finish together only if windows are small near the end. Planning on
// demand gets both: the first windows are sized from the range, later ones from the records per
// day of the windows walked nearest the frontier, and the last ones shrink with what is left, so
// every worker gets a share. Windows are cut from one end of the range: the oldest day first (a
// backfill, the incremental range), or the newest first (the walk toward THREAT_MIRROR_HISTORY_FROM).
//
// What was seen far back says little of the days ahead: after empty days, or when the density
// seen would cut a window far longer than any walked, a density near zero would hand one worker
// the rest of the range however dense it is (issue 41: 500 sequential requests). The planner asks
// for a probe there instead: the first records of the rest of the range by blockedAt (one
// request), which tells where the data begins again and how dense it is there.
import { addDays, daysBetween, maxDay, minDay } from '../lib/days.js';

/** A range this short is one window: an incremental re-scan with nothing new costs one request. */
export const MIN_DAYS_PER_WINDOW = 7;
/** About 20 pages: the partial last page then wastes at most 5% of a window's requests. */
export const TARGET_RECORDS_PER_WINDOW = 2_000;
/**
 * The smallest window the tail is cut into, in records: a window costs about half a request more
 * than its records (its partial last page), so 5 pages keep that near 10% of the tail's requests.
 */
export const SMALLEST_TAIL_RECORDS = 500;

const DAY_MS = 86_400_000;

export type WalkOrder = 'oldest-first' | 'newest-first';

export interface PlannerOptions {
  readonly workers: number;
  readonly order?: WalkOrder | undefined;
  /** Requests the walk may spend in this run (the history walk's budget): windows fit in it, none is cut past it. */
  readonly requests?: number | undefined;
  /** Records per day known before any window is walked (the history walk: those of the days held). */
  readonly density?: number | undefined;
}

/** The next step: a window to walk, or a probe to make first (ProbeAnswer, then ask again). */
export type Planned = { readonly window: [string, string] } | { readonly probe: { readonly from: string; readonly to: string } };

/** What a probe found: the first records of the rest of the range in walk order, by blockedAt. */
export interface ProbeAnswer {
  /** Their blockedAt, in walk order (ascending oldest first, descending newest first). */
  readonly blockedAt: readonly string[];
  /** The page was full: more records follow. */
  readonly more: boolean;
}

/** A window walked whole: its days and records, and when it was cut. */
interface Walked {
  readonly cut: number;
  readonly days: number;
  readonly records: number;
}

export class WindowPlanner {
  readonly #rangeStart: string;
  readonly #rangeEnd: string;
  readonly #order: WalkOrder;
  readonly #workers: number;
  /** The next day no window covers yet, in walk order (windows are always taken from that end). */
  #nextDay: string;
  #requestsLeft: number;
  #cuts = 0;
  /** Each window's place in the order windows were cut, by its first day in walk order. */
  readonly #cutOrder = new Map<string, number>();
  /** Records per day known before any window is walked (PlannerOptions.density). */
  readonly #known: number | undefined;
  /** What the last probe found, until a window cut after it is walked: the density just ahead. */
  #probed: { readonly density: number; readonly atCut: number } | undefined;
  /** Windows walked whole that held records, those cut last kept: the density near the frontier. */
  #walked: Walked[] = [];
  #longestWalked = 0;
  /** A week or more came back empty: the next window waits for a probe. */
  #probeWanted = false;
  #probedSinceWalk = false;
  /** The last day, in walk order, a probe found no record up to; null when none. */
  #emptyThrough: string | null = null;
  readonly #expectedEmpty = new Set<string>();

  /** `nextDay`: the first day, in walk order, that no window covers yet. */
  constructor(rangeStart: string, rangeEnd: string, nextDay: string, options: PlannerOptions) {
    this.#rangeStart = rangeStart;
    this.#rangeEnd = rangeEnd;
    this.#nextDay = nextDay;
    this.#workers = Math.max(1, options.workers);
    this.#order = options.order ?? 'oldest-first';
    this.#requestsLeft = options.requests ?? Infinity;
    this.#known = options.density !== undefined && options.density > 0 ? options.density : undefined;
  }

  /** The next step, or undefined when the range is covered (or the run's requests are planned out). */
  next(): Planned | undefined {
    const remaining = this.#remainingDays();
    if (remaining === 0 || this.#requestsLeft < 1) return undefined;
    const total = daysBetween(this.#rangeStart, this.#rangeEnd);
    if (total <= MIN_DAYS_PER_WINDOW) return this.#cut(remaining, 1);
    if (this.#emptyThrough !== null && this.#inWalkOrder(this.#nextDay, this.#emptyThrough)) {
      // Days a probe found empty: one request covers them.
      const days = daysBetween(...this.#ordered(this.#nextDay, this.#emptyThrough));
      this.#emptyThrough = null;
      this.#expectedEmpty.add(this.#nextDay);
      return this.#cut(days, 1);
    }
    const blind = Math.max(MIN_DAYS_PER_WINDOW, Math.ceil(total / (this.#workers * 4)));
    const density = this.#density();
    if (density === undefined && !this.#probeWanted) return this.#cut(Math.min(blind, remaining), 1);
    let days = density === undefined ? remaining : this.#daysFor(density, remaining);
    // Never far beyond what was walked without looking first.
    if ((this.#probeWanted || days > Math.max(blind, 2 * this.#longestWalked)) && !this.#probedSinceWalk && this.#requestsLeft >= 2) {
      this.#probeWanted = false;
      return { probe: this.#order === 'oldest-first' ? { from: this.#nextDay, to: this.#rangeEnd } : { from: this.#rangeStart, to: this.#nextDay } };
    }
    if (density === undefined) return this.#cut(Math.min(blind, remaining), 1);
    // Within a budget, each window expects at most half of what is left: one denser than expected still ends in this run.
    if (this.#requestsLeft !== Infinity) days = Math.max(1, Math.min(days, Math.floor((Math.max(1, this.#requestsLeft / 2) * 100) / density)));
    return this.#cut(days, Math.max(1, Math.ceil((density * days) / 100)));
  }

  /** What the probe found: the days before its first record are one window, and its records say how dense the data is there. */
  probed(answer: ProbeAnswer): void {
    this.#probedSinceWalk = true;
    this.#requestsLeft -= 1;
    const first = answer.blockedAt[0];
    const last = answer.blockedAt.at(-1);
    const farEnd = this.#order === 'oldest-first' ? this.#rangeEnd : this.#rangeStart;
    if (first === undefined || last === undefined) {
      this.#emptyThrough = farEnd;
      this.#walked = [];
      return;
    }
    const firstDay = first.slice(0, 10);
    this.#emptyThrough = firstDay === this.#nextDay ? null : this.#toward(firstDay, -1);
    // A full page spans records as dense as they come there; a partial one is all the rest holds.
    const spanDays = Math.abs(Date.parse(last) - Date.parse(first)) / DAY_MS;
    const density = answer.more ? Math.max(answer.blockedAt.length - 1, 1) / Math.max(spanDays, 1 / 24) : answer.blockedAt.length / daysBetween(...this.#ordered(firstDay, farEnd));
    this.#probed = { density, atCut: this.#cuts };
    // What was walked before empty days lies behind the data the probe found: it sizes nothing ahead.
    if (this.#emptyThrough !== null) this.#walked = [];
  }

  /** A window walked to its last page from its first teaches the planner how dense the data is; a long one found empty asks for a probe. */
  windowDone(start: string, end: string, records: number): void {
    const days = daysBetween(start, end);
    const first = this.#order === 'oldest-first' ? start : end;
    const expectedEmpty = this.#expectedEmpty.delete(first);
    this.#longestWalked = Math.max(this.#longestWalked, days);
    this.#probedSinceWalk = false;
    if (records === 0) {
      // A week without a record may be a gap before data far ahead; a quiet day among dense ones is not.
      if (!expectedEmpty && days >= MIN_DAYS_PER_WINDOW) this.#probeWanted = true;
      return;
    }
    const cut = this.#cutOf(first);
    // Windows cut after the probe now say how dense it is ahead.
    if (this.#probed !== undefined && cut > this.#probed.atCut) this.#probed = undefined;
    this.#walked.push({ cut, days, records });
    // The windows nearest the frontier: those cut last.
    this.#walked.sort((a, b) => a.cut - b.cut);
    if (this.#walked.length > this.#workers) this.#walked.shift();
  }

  /**
   * A window of TARGET_RECORDS_PER_WINDOW at `density`; near the end, a share of what is left for
   * each worker, ever smaller, so that they end together (never under SMALLEST_TAIL_RECORDS).
   */
  #daysFor(density: number, remaining: number): number {
    const share = Math.max((density * remaining) / this.#workers, SMALLEST_TAIL_RECORDS);
    return Math.min(remaining, Math.max(1, Math.round(Math.min(TARGET_RECORDS_PER_WINDOW, share) / density)));
  }

  /** The density near the frontier: of the windows walked last, or a probe's just ahead, whichever is denser (smaller windows are the safe mistake). */
  #density(): number | undefined {
    const walked = this.#walked.length === 0 ? undefined : this.#walked.reduce((sum, window) => sum + window.records, 0) / this.#walked.reduce((sum, window) => sum + window.days, 0);
    const probed = this.#probed?.density;
    if (walked === undefined || probed === undefined) return walked ?? probed ?? this.#known;
    return Math.max(walked, probed);
  }

  #remainingDays(): number {
    return this.#order === 'oldest-first' ? daysBetween(this.#nextDay, this.#rangeEnd) : daysBetween(this.#rangeStart, this.#nextDay);
  }

  #cutOf(first: string): number {
    return this.#cutOrder.get(first) ?? -1;
  }

  /** `day` moved `days` days in walk order. */
  #toward(day: string, days: number): string {
    return addDays(day, this.#order === 'oldest-first' ? days : -days);
  }

  /** `a` comes at or before `b` in walk order. */
  #inWalkOrder(a: string, b: string): boolean {
    return this.#order === 'oldest-first' ? a <= b : a >= b;
  }

  /** Two days as a range, the earlier first. */
  #ordered(a: string, b: string): [string, string] {
    return a <= b ? [a, b] : [b, a];
  }

  /** The next `days` days in walk order, as a window expected to cost `requests`. */
  #cut(days: number, requests: number): Planned {
    this.#requestsLeft -= requests;
    const from = this.#nextDay;
    this.#cutOrder.set(from, (this.#cuts += 1));
    if (this.#order === 'oldest-first') {
      const end = minDay(addDays(from, days - 1), this.#rangeEnd);
      this.#nextDay = addDays(end, 1);
      return { window: [from, end] };
    }
    const start = maxDay(addDays(from, -(days - 1)), this.#rangeStart);
    this.#nextDay = addDays(start, -1);
    return { window: [start, from] };
  }
}
