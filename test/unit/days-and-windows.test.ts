import { describe, expect, it } from 'vitest';
import { addDays, daysBetween, isDay } from '../../src/lib/days.js';
import { TARGET_RECORDS_PER_WINDOW, WindowPlanner } from '../../src/sync/window-planner.js';

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

function planAll(planner: WindowPlanner, recordsPerDay: (day: string) => number): Array<[string, string]> {
  const windows: Array<[string, string]> = [];
  for (let window = planner.next(); window; window = planner.next()) {
    windows.push(window);
    let records = 0;
    for (let offset = 0; offset < daysBetween(window[0], window[1]); offset += 1) records += recordsPerDay(addDays(window[0], offset));
    planner.windowDone(window[0], window[1], records);
  }
  return windows;
}

function expectExactCover(windows: Array<[string, string]>, from: string, to: string): void {
  expect(windows[0]?.[0]).toBe(from);
  expect(windows.at(-1)?.[1]).toBe(to);
  for (let index = 1; index < windows.length; index += 1) expect(windows[index]?.[0]).toBe(addDays(windows[index - 1]?.[1] ?? '', 1));
  for (const [start, end] of windows) expect(start <= end).toBe(true);
}

describe('WindowPlanner', () => {
  it('keeps a short range as one window', () => {
    expect(planAll(new WindowPlanner('2024-05-01', '2024-05-03', '2024-05-01', 4), () => 0)).toEqual([['2024-05-01', '2024-05-03']]);
    expect(planAll(new WindowPlanner('2024-05-01', '2024-05-07', '2024-05-01', 4), () => 1000)).toHaveLength(1);
  });

  it('covers long ranges exactly, without gaps or overlaps, whatever the density', () => {
    const densities: Array<(day: string) => number> = [() => 0, () => 100, () => 5000, (day) => (day.endsWith('7') ? 4000 : 3)];
    for (const density of densities) {
      for (const [from, to, workers] of [['2024-01-01', '2024-07-18', 4], ['2023-12-30', '2024-01-29', 1], ['2024-02-01', '2024-02-20', 16]] as const) {
        expectExactCover(planAll(new WindowPlanner(from, to, from, workers), density), from, to);
      }
    }
  });

  it('sizes windows from the density it measured, and shares the tail among the workers', () => {
    const windows = planAll(new WindowPlanner('2024-01-01', '2024-07-18', '2024-01-01', 4), () => 100);
    // 100 a day: ~20-day windows after the first ones, smaller at the end.
    expect(windows.length).toBeLessThan(20);
    expect(daysBetween(...(windows[5] as [string, string]))).toBe(TARGET_RECORDS_PER_WINDOW / 100);
    expect(daysBetween(...(windows.at(-1) as [string, string]))).toBeLessThan(10);
    const dense = planAll(new WindowPlanner('2024-01-01', '2024-03-31', '2024-01-01', 4), () => 5000);
    expect(dense.slice(4).every(([start, end]) => start === end)).toBe(true);
  });

  it('continues from the first day no window covers yet (a resumed plan)', () => {
    expectExactCover(planAll(new WindowPlanner('2024-01-01', '2024-03-31', '2024-02-10', 4), () => 50), '2024-02-10', '2024-03-31');
    expect(new WindowPlanner('2024-01-01', '2024-03-31', '2024-04-01', 4).next()).toBeUndefined();
  });
});
