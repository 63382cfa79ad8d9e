import { describe, expect, it } from 'vitest';
import { addDays, daysBetween, isDay } from '../../src/days.js';
import { MIN_DAYS_PER_WINDOW, splitIntoWindows } from '../../src/sync/plan-windows.js';

describe('days', () => {
  it('validates and moves across month, leap-year and year ends', () => {
    expect(isDay('2024-02-29')).toBe(true);
    expect(isDay('2023-02-29')).toBe(false);
    expect(isDay('2024-13-01')).toBe(false);
    expect(isDay('2024-1-01')).toBe(false);
    expect(addDays('2024-12-31', 1)).toBe('2025-01-01');
    expect(addDays('2024-03-01', -1)).toBe('2024-02-29');
    expect(daysBetween('2024-01-01', '2024-12-31')).toBe(366);
    expect(daysBetween('2024-01-02', '2024-01-01')).toBe(0);
  });
});

describe('splitIntoWindows', () => {
  it('keeps a short range as one window', () => {
    expect(splitIntoWindows('2024-05-01', '2024-05-03', 8)).toEqual([['2024-05-01', '2024-05-03']]);
  });

  it('covers a long range exactly, without gaps or overlaps, in at most maxWindows windows', () => {
    for (const [from, to, max] of [['2024-01-01', '2024-07-18', 8], ['2023-12-30', '2024-01-29', 4], ['2024-02-01', '2024-02-20', 64]] as const) {
      const windows = splitIntoWindows(from, to, max);
      expect(windows.length).toBeLessThanOrEqual(max);
      expect(windows[0]?.[0]).toBe(from);
      expect(windows.at(-1)?.[1]).toBe(to);
      for (let index = 1; index < windows.length; index += 1) {
        expect(windows[index]?.[0]).toBe(addDays(windows[index - 1]?.[1] ?? '', 1));
      }
      const total = windows.reduce((sum, [start, end]) => sum + daysBetween(start, end), 0);
      expect(total).toBe(daysBetween(from, to));
      if (windows.length > 1) for (const [start, end] of windows) expect(daysBetween(start, end)).toBeGreaterThanOrEqual(MIN_DAYS_PER_WINDOW - 1);
    }
  });
});
