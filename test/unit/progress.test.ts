import { describe, expect, it } from 'vitest';
import { drawsProgressLine, TerminalLine } from '../../src/progress/terminal-line.js';
import { formatDuration, planProgress } from '../../src/progress/plan-progress.js';
import type { PlanRunRow, PlanWindowsRow } from '../../src/db/read/status-reads.js';

const START = '2026-03-01T12:00:00.000Z';
const plan = { mode: 'backfill', rangeStart: '2026-01-01', rangeEnd: '2026-01-30' };
const run = (changes: Partial<PlanRunRow> = {}): PlanRunRow => ({ id: 7, mode: 'backfill', status: 'running', rangeStart: '2026-01-01', rangeEnd: '2026-01-30', startedAt: START, pages: 40, retries: 2, ...changes });
const windows = (changes: Partial<PlanWindowsRow> = {}): PlanWindowsRow => ({ windows: 4, windowsCompleted: 1, daysPlanned: 28, daysDone: 7, daysDoneSince: 7, records: 4000, partialDays: 0, ...changes });
const at = (seconds: number): Date => new Date(Date.parse(START) + seconds * 1000);

describe('planProgress', () => {
  it('measures days, rate and ETA against this run: 7 of 30 days in 10 s leave 23 days, about 33 s', () => {
    expect(planProgress('acme', plan, run(), windows(), at(10))).toEqual({
      organization: 'acme',
      mode: 'backfill',
      state: 'running',
      runId: 7,
      rangeStart: '2026-01-01',
      rangeEnd: '2026-01-30',
      daysDone: 7,
      daysWalked: 7,
      daysTotal: 30,
      fraction: 7 / 30,
      percent: 23.3,
      threats: 4000,
      requests: 42,
      startedAt: START,
      requestsPerSecond: 4.2,
      etaSeconds: 33,
    });
  });

  it('has no ETA before a window of this run completes, whatever earlier runs of a resumed plan did', () => {
    const resumed = planProgress('acme', plan, run(), windows({ daysDone: 14, daysDoneSince: 0, partialDays: 0 }), at(10));
    expect(resumed).toMatchObject({ daysDone: 14, etaSeconds: null, requestsPerSecond: 4.2 });
  });

  it('says nothing of pace for an unfinished plan, or when the reader clock is behind the writer', () => {
    expect(planProgress('acme', plan, run({ status: 'interrupted' }), windows(), at(10))).toMatchObject({ state: 'unfinished', runId: null, requests: null, requestsPerSecond: null, etaSeconds: null });
    expect(planProgress('acme', plan, undefined, windows(), at(10))).toMatchObject({ state: 'unfinished', etaSeconds: null });
    expect(planProgress('acme', plan, run(), windows(), at(-60))).toMatchObject({ state: 'running', requestsPerSecond: null, etaSeconds: null });
  });

  it("counts a reconciliation's days as those of its windows, not of its range", () => {
    const reconcile = planProgress('acme', { mode: 'reconcile', rangeStart: '2025-01-01', rangeEnd: '2025-12-31' }, run({ mode: 'reconcile' }), windows({ daysPlanned: 6, daysDone: 3, daysDoneSince: 3 }), at(4));
    expect(reconcile).toMatchObject({ daysDone: 3, daysTotal: 6, fraction: 0.5, etaSeconds: 4 });
  });

  it('moves with the pages of the windows under way: 7 days done and 6 walked of open windows are 13 of 30', () => {
    const walking = planProgress('acme', plan, run(), windows({ partialDays: 6 }), at(10));
    expect(walking).toMatchObject({ daysDone: 7, daysWalked: 13, fraction: 13 / 30, etaSeconds: Math.round((10 * 17) / 13) });
  });

  it('is done at 100% with an ETA of 0 once every day is walked', () => {
    expect(planProgress('acme', plan, run(), windows({ daysPlanned: 30, daysDone: 30, daysDoneSince: 30 }), at(20))).toMatchObject({ fraction: 1, percent: 100, etaSeconds: 0 });
  });
});

describe('formatDuration', () => {
  it('writes seconds, minutes and hours as a person reads them', () => {
    expect([0, 42, 60, 185, 3599, 3600, 3725, 90000].map(formatDuration)).toEqual(['0s', '42s', '1m00s', '3m05s', '59m59s', '1h00m', '1h02m', '25h00m']);
  });
});

describe('the progress line', () => {
  it('is drawn only on a terminal that does not ask for plain output', () => {
    expect(drawsProgressLine({ TERM: 'xterm' }, { isTTY: true })).toBe(true);
    expect(drawsProgressLine({}, { isTTY: true })).toBe(true);
    expect(drawsProgressLine({ TERM: 'xterm' }, { isTTY: false })).toBe(false);
    expect(drawsProgressLine({ TERM: 'xterm' }, {})).toBe(false);
    expect(drawsProgressLine({ TERM: 'dumb' }, { isTTY: true })).toBe(false);
    expect(drawsProgressLine({ NO_COLOR: '1' }, { isTTY: true })).toBe(false);
    // no-color.org: an empty NO_COLOR does not count.
    expect(drawsProgressLine({ NO_COLOR: '' }, { isTTY: true })).toBe(true);
  });

  it('redraws in place, cut to the width so it never wraps, and erases itself before other output', () => {
    let written = '';
    const line = new TerminalLine((text) => (written += text), () => 30);
    line.draw('backfill 5%: 1/20 days');
    line.draw('backfill 10%: 2/20 days, 0/1 orgs done, 1,000 threats');
    line.clear();
    line.clear();
    line.finish('done');
    expect(written).toBe('\rbackfill 5%: 1/20 days\x1b[K\rbackfill 10%: 2/20 days, 0/1…\x1b[K\r\x1b[Kdone\n');
  });
});
