// Cuts a run's range into windows as workers ask for them, sized by the density seen so far.
//
// A window costs one request more than its records need (the last, partial page), so windows
// should be few; workers finish together only if windows are small near the end. Planning on
// demand gets both: the first windows are sized from the range, later ones from the records per
// day measured on finished windows, and the last ones are cut so every worker gets a share.
import { addDays, daysBetween, minDay } from '../lib/days.js';

/** A range this short is one window: an incremental re-scan with nothing new costs one request. */
export const MIN_DAYS_PER_WINDOW = 7;
/** About 20 pages: the partial last page then wastes at most 5% of a window's requests. */
export const TARGET_RECORDS_PER_WINDOW = 2_000;

export class WindowPlanner {
  readonly #rangeStart: string;
  #rangeEnd: string;
  #nextDay: string;
  readonly #workers: number;
  #measuredDays = 0;
  #measuredRecords = 0;

  /** `nextDay`: the first day no window covers yet (windows are always taken from the front). */
  constructor(rangeStart: string, rangeEnd: string, nextDay: string, workers: number) {
    this.#rangeStart = rangeStart;
    this.#rangeEnd = rangeEnd;
    this.#nextDay = nextDay;
    this.#workers = Math.max(1, workers);
  }

  /** The next window to walk, or undefined when the range is covered. */
  next(): [string, string] | undefined {
    const remaining = daysBetween(this.#nextDay, this.#rangeEnd);
    if (remaining === 0) return undefined;
    const total = daysBetween(this.#rangeStart, this.#rangeEnd);
    let days: number;
    if (total <= MIN_DAYS_PER_WINDOW) {
      days = remaining;
    } else {
      const density = this.#measuredDays > 0 ? Math.max(this.#measuredRecords / this.#measuredDays, 1e-9) : undefined;
      days = density ? Math.round(TARGET_RECORDS_PER_WINDOW / density) : Math.max(MIN_DAYS_PER_WINDOW, Math.ceil(total / (this.#workers * 4)));
      // Near the end, share what is left among the workers instead of handing it to one, but
      // not in slivers: a window under a quarter of the target wastes more than it balances.
      const smallest = density ? Math.round(TARGET_RECORDS_PER_WINDOW / 4 / density) : 1;
      days = Math.max(1, Math.min(days, Math.max(Math.ceil(remaining / this.#workers), smallest), remaining));
    }
    const start = this.#nextDay;
    const end = minDay(addDays(start, days - 1), this.#rangeEnd);
    this.#nextDay = addDays(end, 1);
    return [start, end];
  }

  /** A finished window teaches the planner how dense the data is. */
  windowDone(start: string, end: string, records: number): void {
    this.#measuredDays += daysBetween(start, end);
    this.#measuredRecords += records;
  }
}
