// "Whole pages only", judged by what the service sent rather than by the program's own counters: in
// any view of the mirror, each page of threats the stand-in served is there whole or not at all.
import type { Standin } from '../../src/standin/index.js';

/** The ids of each page of threats the stand-in served whole (status 200, no fault bent it). */
export function pagesServed(standin: Standin): number[][] {
  return standin.stats.requests.flatMap((request) => (request.status === 200 && request.ids !== undefined && request.ids.length > 0 ? [[...request.ids]] : []));
}

/** The served pages a view holds only part of: each a half-written page. */
export function partialPages(present: ReadonlySet<number>, pages: readonly number[][]): Array<{ page: number[]; missing: number[] }> {
  return pages.flatMap((page) => {
    const missing = page.filter((id) => !present.has(id));
    return missing.length > 0 && missing.length < page.length ? [{ page, missing }] : [];
  });
}
