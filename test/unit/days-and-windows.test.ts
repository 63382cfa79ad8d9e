import { describe, expect, it } from 'vitest';
import { addDays, daysBetween, isDay } from '../../src/lib/days.js';
import { type ProbeAnswer, TARGET_RECORDS_PER_WINDOW, WindowPlanner } from '../../src/sync/window-planner.js';
import { newestMissingDays, nextDayToWalk } from '../../src/sync/history.js';

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

/** Timestamps of a day's records, spread evenly over it. */
function stamps(day: string, count: number): string[] {
  return Array.from({ length: count }, (_, index) => new Date(Date.parse(`${day}T00:00:00.000Z`) + Math.floor(((index + 0.5) * 86_400_000) / count)).toISOString());
}

/** What a probe of [from, to] would find: the first 100 records by blockedAt in walk order. */
function answerProbe(from: string, to: string, recordsPerDay: (day: string) => number, newestFirst: boolean): ProbeAnswer {
  const found: string[] = [];
  const days = daysBetween(from, to);
  for (let offset = 0; offset < days && found.length <= 100; offset += 1) {
    const day = newestFirst ? addDays(to, -offset) : addDays(from, offset);
    const times = stamps(day, recordsPerDay(day));
    found.push(...(newestFirst ? times.reverse() : times));
  }
  return { blockedAt: found.slice(0, 100), more: found.length > 100 };
}

interface Planning {
  readonly windows: Array<[string, string]>;
  readonly probes: number;
}

/** Plans a whole range one window at a time, as one worker would, answering probes from `recordsPerDay`. */
function plan(planner: WindowPlanner, recordsPerDay: (day: string) => number, newestFirst = false): Planning {
  const windows: Array<[string, string]> = [];
  let probes = 0;
  for (let step = planner.next(); step; step = planner.next()) {
    if ('probe' in step) {
      probes += 1;
      planner.probed(answerProbe(step.probe.from, step.probe.to, recordsPerDay, newestFirst));
      continue;
    }
    const window = step.window;
    windows.push(window);
    let records = 0;
    for (let offset = 0; offset < daysBetween(window[0], window[1]); offset += 1) records += recordsPerDay(addDays(window[0], offset));
    planner.windowDone(window[0], window[1], records);
  }
  return { windows, probes };
}

function planAll(planner: WindowPlanner, recordsPerDay: (day: string) => number): Array<[string, string]> {
  return plan(planner, recordsPerDay).windows;
}

function expectExactCover(windows: Array<[string, string]>, from: string, to: string): void {
  expect(windows[0]?.[0]).toBe(from);
  expect(windows.at(-1)?.[1]).toBe(to);
  for (let index = 1; index < windows.length; index += 1) expect(windows[index]?.[0]).toBe(addDays(windows[index - 1]?.[1] ?? '', 1));
  for (const [start, end] of windows) expect(start <= end).toBe(true);
}

const four = { workers: 4 };

describe('WindowPlanner', () => {
  it('keeps a short range as one window', () => {
    expect(planAll(new WindowPlanner('2024-05-01', '2024-05-03', '2024-05-01', four), () => 0)).toEqual([['2024-05-01', '2024-05-03']]);
    expect(planAll(new WindowPlanner('2024-05-01', '2024-05-07', '2024-05-01', four), () => 1000)).toHaveLength(1);
  });

  it('covers long ranges exactly, without gaps or overlaps, whatever the density', () => {
    const densities: Array<(day: string) => number> = [() => 0, () => 100, () => 5000, (day) => (day.endsWith('7') ? 4000 : 3)];
    for (const density of densities) {
      for (const [from, to, workers] of [['2024-01-01', '2024-07-18', 4], ['2023-12-30', '2024-01-29', 1], ['2024-02-01', '2024-02-20', 16]] as const) {
        expectExactCover(planAll(new WindowPlanner(from, to, from, { workers }), density), from, to);
        const newest = plan(new WindowPlanner(from, to, to, { workers, order: 'newest-first' }), density, true).windows;
        expectExactCover([...newest].reverse(), from, to);
      }
    }
  });

  it('sizes windows from the density it measured, and shares the tail among the workers, ever smaller', () => {
    const windows = planAll(new WindowPlanner('2024-01-01', '2024-07-18', '2024-01-01', four), () => 100);
    // 100 a day: ~20-day windows after the first ones, smaller at the end.
    expect(windows.length).toBeLessThan(25);
    expect(daysBetween(...(windows[5] as [string, string]))).toBe(TARGET_RECORDS_PER_WINDOW / 100);
    const tail = windows.slice(-4).map((window) => daysBetween(...window));
    expect(tail.every((days) => days <= 10)).toBe(true);
    const dense = planAll(new WindowPlanner('2024-01-01', '2024-03-31', '2024-01-01', four), () => 5000);
    expect(dense.slice(4).every(([start, end]) => start === end)).toBe(true);
  });

  it('after empty days, probes where the data begins and cuts it as from its first day (issue 41)', () => {
    // --from 2025-01-01 on data from 2026-09-30 to 2026-11-28, 833 a day.
    const dense = (day: string): number => (day >= '2026-09-30' ? 833 : 0);
    const { windows, probes } = plan(new WindowPlanner('2025-01-01', '2026-11-28', '2025-01-01', four), dense);
    expectExactCover(windows, '2025-01-01', '2026-11-28');
    expect(probes).toBeLessThanOrEqual(2);
    const records = (window: [string, string]): number => Array.from({ length: daysBetween(...window) }, (_, offset) => dense(addDays(window[0], offset))).reduce((a, b) => a + b, 0);
    // No window holds much more than a target's worth: before, one held the whole 50,000.
    expect(Math.max(...windows.map(records))).toBeLessThanOrEqual(2 * TARGET_RECORDS_PER_WINDOW);
    // A few stray records before the data begin do not make it look sparse either.
    const stray = (day: string): number => (day === '2025-02-03' ? 2 : dense(day));
    expect(Math.max(...plan(new WindowPlanner('2025-01-01', '2026-11-28', '2025-01-01', four), stray).windows.map((window) => records(window)))).toBeLessThanOrEqual(2 * TARGET_RECORDS_PER_WINDOW + 2);
  });

  it('newest first within a request budget: cuts no window past it, the newest days first', () => {
    const planner = new WindowPlanner('2024-01-01', '2024-03-31', '2024-03-31', { workers: 4, order: 'newest-first', requests: 10, density: 50 });
    const { windows } = plan(planner, () => 50, true);
    expect(windows[0]?.[1]).toBe('2024-03-31');
    for (let index = 1; index < windows.length; index += 1) expect(windows[index]?.[1]).toBe(addDays(windows[index - 1]?.[0] ?? '', -1));
    const requests = windows.reduce((sum, window) => sum + Math.ceil((50 * daysBetween(...window)) / 100), 0);
    expect(requests).toBeLessThanOrEqual(10);
    expect(windows.at(-1)?.[0] as string > '2024-01-01').toBe(true);
  });

  it('continues from the first day no window covers yet (a resumed plan)', () => {
    expectExactCover(planAll(new WindowPlanner('2024-01-01', '2024-03-31', '2024-02-10', four), () => 50), '2024-02-10', '2024-03-31');
    expect(new WindowPlanner('2024-01-01', '2024-03-31', '2024-04-01', four).next()).toBeUndefined();
  });
});

describe('the history walk’s days', () => {
  const plan = { rangeStart: '2026-01-01', rangeEnd: '2026-01-31' };
  const window = (windowStart: string, windowEnd: string, done: boolean): { windowStart: string; windowEnd: string; completedAt: string | null } => ({
    windowStart,
    windowEnd,
    completedAt: done ? '2026-02-01T00:00:00.000Z' : null,
  });

  it('nextDayToWalk: a new plan’s newest day, the newest window not walked whole, or the day before the oldest cut', () => {
    expect(nextDayToWalk(plan, [])).toBe('2026-01-31');
    expect(nextDayToWalk(plan, [window('2026-01-25', '2026-01-31', true)])).toBe('2026-01-24');
    expect(nextDayToWalk(plan, [window('2026-01-25', '2026-01-31', true), window('2026-01-20', '2026-01-24', false), window('2026-01-15', '2026-01-19', false)])).toBe('2026-01-24');
    expect(nextDayToWalk(plan, [window('2026-01-10', '2026-01-31', true), window('2026-01-01', '2026-01-09', false)])).toBe('2026-01-09');
    expect(nextDayToWalk(plan, [window('2026-01-10', '2026-01-31', true), window('2026-01-01', '2026-01-09', true)])).toBeUndefined();
  });

  it('newestMissingDays: the newest run of days not walked, ending at the first walked before it', () => {
    const walked = new Set(['2026-01-31', '2026-01-30', '2026-01-20']);
    expect(newestMissingDays(walked, '2026-01-01', '2026-01-31')).toEqual({ from: '2026-01-21', to: '2026-01-29' });
    expect(newestMissingDays(new Set(['2026-01-02', '2026-01-01']), '2026-01-01', '2026-01-02')).toBeUndefined();
  });
});
