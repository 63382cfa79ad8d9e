// The pure parts of a walk's consistency: where a removal candidate falls among the pages a walk
// read, which page is read across a boundary, what that page proves, and how far a plan's days are
// closed by when their windows were walked.
import { describe, expect, it } from 'vitest';
import type { PlanWindow } from '../../src/db/read/plan-reads.js';
import type { Threat } from '../../src/records.js';
import { pageAcross, place, placeInAnswer, verdictAcross } from '../../src/sync/removal-check.js';
import { closedThrough } from '../../src/sync/sync-threats.js';
import { type PageBounds, WindowSeen } from '../../src/sync/window-seen.js';

const pages: PageBounds[] = [
  { page: 1, first: 100, last: 199, final: false },
  { page: 2, first: 210, last: 299, final: false },
  { page: 3, first: 305, last: 340, final: true },
];

const threat = (id: number): Threat => ({ id, content: `https://t${id}.example/`, type: 'URL', blockedAt: '2026-03-01T10:00:00.000Z' });

describe('a removal candidate among the pages of a walk', () => {
  it('inside a page, below the first or above the final one: not listed when that page was read', () => {
    for (const id of [5, 150, 250, 320, 900]) expect(place(id, pages)).toEqual({ kind: 'absent' });
  });

  it('between two pages: the list may have shifted there, so that boundary is read again', () => {
    expect(place(205, pages)).toEqual({ kind: 'boundary', after: pages[0] });
    expect(place(300, pages)).toEqual({ kind: 'boundary', after: pages[1] });
    // Past a last page that was not the final one (an empty final page followed it).
    expect(place(900, pages.slice(0, 2))).toEqual({ kind: 'boundary', after: pages[1] });
  });

  it('a walk that saw no record: nothing was listed', () => {
    expect(place(42, [])).toEqual({ kind: 'absent' });
  });
});

describe('the page read across a boundary', () => {
  it('holds both sides of it, away from its own edges, for any page', () => {
    for (let after = 1; after <= 500; after += 1) {
      const { perPage, page } = pageAcross(after);
      const start = (page - 1) * perPage;
      const lastOffset = 100 * after - 1;
      expect(perPage).toBeGreaterThanOrEqual(50);
      expect(perPage).toBeLessThanOrEqual(100);
      expect(start).toBeLessThanOrEqual(lastOffset - 10);
      expect(start + perPage - 1).toBeGreaterThanOrEqual(lastOffset + 1 + 10);
    }
  });

  it('proves the candidate unlisted only when the boundary is still there and nothing unseen lies in it', () => {
    const after = pages[0] as PageBounds;
    const read = (ids: number[], nextPage: string | null = '3') => ({ threats: ids.map(threat), nextPage });
    expect(verdictAcross(read([190, 199, 210, 220]), after, 205)).toBe('absent');
    expect(verdictAcross(read([190, 199, 205, 210]), after, 205)).toBe('listed');
    // 199 is gone: the list moved, nothing can be told.
    expect(verdictAcross(read([190, 198, 210, 220]), after, 205)).toBe('unknown');
    // A record the walk never saw between the two pages.
    expect(verdictAcross(read([199, 202, 210]), after, 205)).toBe('unknown');
    // The list ends at the boundary, and the page says so.
    expect(verdictAcross(read([190, 199], null), after, 205)).toBe('absent');
    expect(verdictAcross(read([190, 199], '3'), after, 205)).toBe('unknown');
  });
});

describe("a content look-up's answer", () => {
  const answer = (ids: number[]) => ({ threats: ids.map(threat) });
  it('finds the threat, proves it unlisted where a page spans its id, and reads on or across otherwise', () => {
    expect(placeInAnswer(answer([3, 7, 9]), 7, false)).toEqual(threat(7));
    expect(placeInAnswer(answer([3, 9]), 7, false)).toBe('absent');
    expect(placeInAnswer(answer([8, 9]), 7, true)).toBe('absent');
    expect(placeInAnswer(answer([8, 9]), 7, false)).toBe('later');
    expect(placeInAnswer(answer([3, 5]), 7, false)).toBe('earlier');
    expect(placeInAnswer(answer([]), 7, true)).toBe('earlier');
  });
});

describe('what a walk saw', () => {
  it('refuses a page that overlaps the ones before it: a record came in behind the walk', () => {
    const seen = new WindowSeen('2026-03-01', '2026-03-01');
    expect(seen.add([threat(1), threat(2)], 1, false)).toBe(true);
    expect(seen.add([threat(2), threat(3)], 2, true)).toBe(false);
    expect([...seen.ids]).toEqual([1, 2]);
    expect(seen.add([threat(3)], 2, true)).toBe(true);
    expect(seen.pages).toEqual([
      { page: 1, first: 1, last: 2, final: false },
      { page: 2, first: 3, last: 3, final: true },
    ]);
  });

  it('resumed from a cursor, starts past the last id the earlier process committed', () => {
    const seen = new WindowSeen('2026-03-01', '2026-03-01', { page: 4, first: 300, last: 399 });
    expect(seen.above).toBe(399);
    expect(seen.add([threat(399)], 5, true)).toBe(false);
    expect(seen.add([threat(400)], 5, true)).toBe(true);
    expect(seen.pages.map((page) => page.page)).toEqual([4, 5]);
  });
});

describe('the days a finished plan vouches for', () => {
  const window = (windowStart: string, windowEnd: string, startedAt: string | null): PlanWindow => ({
    planId: 1, windowStart, windowEnd, nextPage: null, completedAt: 'x', lastId: null, startedAt,
  });

  it('are those whose window was walked after the day ended, from the start of the range, without a gap', () => {
    const plan = { rangeStart: '2026-11-10' };
    expect(closedThrough(plan, [window('2026-11-10', '2026-11-16', '2026-11-20T12:00:00.000Z'), window('2026-11-17', '2026-11-20', '2026-11-20T12:00:00.000Z')])).toBe('2026-11-19');
    // A window walked before midnight, though the run ended after it.
    expect(closedThrough(plan, [window('2026-11-10', '2026-11-20', '2026-11-20T23:59:59.000Z')])).toBe('2026-11-19');
    // Walked again after the day ended (a plan resumed days later): the later windows count again.
    expect(closedThrough(plan, [window('2026-11-10', '2026-11-20', '2026-11-24T12:00:00.000Z'), window('2026-11-21', '2026-11-24', '2026-11-24T12:00:00.000Z')])).toBe('2026-11-23');
    // An early window walked before its days ended stops the count there, whatever comes after.
    expect(closedThrough(plan, [window('2026-11-10', '2026-11-16', '2026-11-15T12:00:00.000Z'), window('2026-11-17', '2026-11-20', '2026-11-24T12:00:00.000Z')])).toBe('2026-11-14');
    expect(closedThrough(plan, [window('2026-11-10', '2026-11-16', '2026-11-10T12:00:00.000Z')])).toBeNull();
  });
});
