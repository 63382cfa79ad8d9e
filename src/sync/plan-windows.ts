// Splits a date range into the windows a run walks, each with its own cursor.
import { addDays, daysBetween } from '../days.js';

/**
 * A window costs at least one request even when empty, so a short range stays one window
 * (an incremental re-scan with nothing new costs one request); a long one is cut into a few
 * windows per worker so they can be walked in parallel.
 */
export const MIN_DAYS_PER_WINDOW = 7;

export function splitIntoWindows(from: string, to: string, maxWindows: number): Array<[string, string]> {
  const days = daysBetween(from, to);
  if (days === 0) return [];
  const count = Math.max(1, Math.min(Math.ceil(days / MIN_DAYS_PER_WINDOW), Math.floor(maxWindows), days));
  const base = Math.floor(days / count);
  const longer = days % count;
  const windows: Array<[string, string]> = [];
  let start = from;
  for (let index = 0; index < count; index += 1) {
    const length = base + (index < longer ? 1 : 0);
    const end = addDays(start, length - 1);
    windows.push([start, end]);
    start = addDays(end, 1);
  }
  return windows;
}
