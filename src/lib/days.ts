// UTC calendar days as 'YYYY-MM-DD' strings: the unit of the service's date filter.

export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

/** The clock a fixed start asks for (THREAT_MIRROR_NOW): time starts there, and it still moves. */
export function clockStartingAt(fixedNow: Date | undefined): Clock {
  if (fixedNow === undefined) return systemClock;
  const startMs = fixedNow.getTime();
  const origin = performance.now();
  return () => new Date(startMs + (performance.now() - origin));
}

const DAY_MS = 86_400_000;
const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Days already checked: validation runs once per record, and records share few days. */
const knownDays = new Map<string, boolean>();

/** True for a real calendar day in YYYY-MM-DD form (rejects 2024-13-01 and 2023-02-29). */
export function isDay(value: string): boolean {
  let valid = knownDays.get(value);
  if (valid === undefined) {
    const date = DAY_PATTERN.test(value) ? new Date(`${value}T00:00:00.000Z`) : undefined;
    valid = date !== undefined && !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
    if (knownDays.size < 100_000) knownDays.set(value, valid);
  }
  return valid;
}

export function dayOf(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export function addDays(day: string, days: number): string {
  return dayOf(new Date(Date.parse(`${day}T00:00:00.000Z`) + days * DAY_MS));
}

/** Inclusive count of days from `from` to `to` (0 when to < from). */
export function daysBetween(from: string, to: string): number {
  const span = (Date.parse(`${to}T00:00:00.000Z`) - Date.parse(`${from}T00:00:00.000Z`)) / DAY_MS + 1;
  return Math.max(0, Math.round(span));
}

export function minDay(a: string, b: string): string {
  return a < b ? a : b;
}

export function maxDay(a: string, b: string): string {
  return a > b ? a : b;
}
