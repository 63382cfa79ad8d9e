// A window's removal candidates settled with the service before anything is marked removed
// (docs/reconciliation.md): "a removal is concluded only when it is certain".
//
// A candidate is a stored threat of the window's days that the walk did not return. Pages are
// id-ascending snapshots of the live list, so where its id falls tells what the walk proves:
// - inside a page's ids (or below the first page, or above the last one): it was not listed in the
//   window when that page was read;
// - between two pages: the list may have shifted under the walk between them and skipped it. One
//   page read across that boundary settles it: if it holds the last id of the page before and the
//   record after that is above the candidate, it is not listed; if it holds the candidate, the walk
//   missed it, and the window is walked again.
// A threat not listed in its window may have moved to another day: a request for its content over
// all days finds it then (it is written, never removed). Only a threat found nowhere is removed.
import { fetchThreatPage, PAGE_SIZE, type ThreatPage } from '../api/threat-client.js';
import type { RemovalCandidate } from '../db/writer/window-end.js';
import type { Threat } from '../records.js';
import type { RunContext } from './run-contract.js';
import type { PageBounds } from './window-seen.js';

/** The start of a confirmation's date range: a moved threat is looked for on every day. */
const ALL_DAYS_FROM = '1970-01-01';
/**
 * Pages of a content query's answer read at most: a content shared by more threats than these hold
 * (3,000) leaves the candidate unsettled. Read in order, as the service's own cursors lead.
 */
const MAX_QUERY_PAGES = 30;
/** Confirmations of one window in flight at once (the key's own budget still limits them all). */
const MAX_CHECKS_IN_FLIGHT = 4;
/** The smallest page a read across a boundary asks for. */
const MIN_ACROSS_PAGE = 50;

export interface Settlement {
  /** Listed nowhere: marked removed. */
  readonly removedIds: readonly number[];
  /** Still listed, in its window or on another day: written as the service sent it. */
  readonly found: readonly Threat[];
  /** false: the walk missed a record the list held (or could not tell): the window is walked again. */
  readonly complete: boolean;
  /** Left as they are: the answer could not tell (a content shared by very many threats). */
  readonly unsettled: number;
  /** A request failed before every candidate was settled; what was settled stands. */
  readonly failure?: { readonly error: unknown };
  /** With a failure: the candidates it left unsettled (a reconciliation carries them over to its next run). */
  readonly pending: readonly RemovalCandidate[];
}

interface WindowRange {
  readonly windowStart: string;
  readonly windowEnd: string;
}

type Placement = { readonly kind: 'absent' } | { readonly kind: 'boundary'; readonly after: PageBounds };

export async function settleCandidates(
  context: RunContext,
  window: WindowRange,
  candidates: readonly RemovalCandidate[],
  pages: readonly PageBounds[],
  today: string,
  signal: AbortSignal,
): Promise<Settlement> {
  const byBoundary = new Map<PageBounds, RemovalCandidate[]>();
  for (const candidate of candidates) {
    const placement = place(candidate.id, pages);
    if (placement.kind === 'boundary') byBoundary.set(placement.after, [...(byBoundary.get(placement.after) ?? []), candidate]);
  }
  const notListed = { removedIds: [], found: [], unsettled: 0 };
  try {
    for (const [after, between] of byBoundary) {
      const across = await readAcross(context, window, after, signal);
      if (between.some((candidate) => verdictAcross(across, after, candidate.id) !== 'absent')) return { ...notListed, complete: false, pending: [] };
    }
  } catch (error) {
    return { ...notListed, complete: false, failure: { error }, pending: candidates };
  }
  return findMoved(context, candidates, today, signal);
}

/** Where a candidate's id falls among the pages the walk read. */
export function place(id: number, pages: readonly PageBounds[]): Placement {
  const first = pages[0];
  if (!first || id < first.first) return { kind: 'absent' };
  for (let index = 0; index < pages.length; index += 1) {
    const page = pages[index] as PageBounds;
    if (id <= page.last) return { kind: 'absent' };
    const next = pages[index + 1];
    if (next === undefined) return page.final ? { kind: 'absent' } : { kind: 'boundary', after: page };
    if (id < next.first) return { kind: 'boundary', after: page };
  }
  return { kind: 'absent' };
}

/**
 * A page over the live list holding the offsets on both sides of the boundary after `after`, as
 * far from its own edges as page sizes allow: next_page is a page number, so a page of 97 records
 * starts at offset 97 × (n − 1). One read is one snapshot.
 */
export function pageAcross(afterPage: number): { perPage: number; page: number } {
  const lastOffset = PAGE_SIZE * afterPage - 1;
  let best = { perPage: MIN_ACROSS_PAGE, page: Math.floor(lastOffset / MIN_ACROSS_PAGE) + 1, margin: -1 };
  for (let perPage = PAGE_SIZE; perPage >= MIN_ACROSS_PAGE; perPage -= 1) {
    const start = Math.floor(lastOffset / perPage) * perPage;
    const margin = Math.min(lastOffset - start, start + perPage - 2 - lastOffset);
    if (margin > best.margin) best = { perPage, page: start / perPage + 1, margin };
  }
  return { perPage: best.perPage, page: best.page };
}

function readAcross(context: RunContext, window: WindowRange, after: PageBounds, signal: AbortSignal): Promise<ThreatPage> {
  const { perPage, page } = pageAcross(after.page);
  const request = { startDate: window.windowStart, endDate: window.windowEnd, nextPage: page === 1 ? null : String(page), perPage };
  return fetchThreatPage(context.deps.api, context.organization, request, signal);
}

/** listed: the candidate is there; absent: the record after the boundary's last id is above it; unknown: the list moved. */
export function verdictAcross(across: Pick<ThreatPage, 'threats' | 'nextPage'>, after: PageBounds, id: number): 'listed' | 'absent' | 'unknown' {
  const ids = across.threats.map((threat) => threat.id).sort((a, b) => a - b);
  if (ids.includes(id)) return 'listed';
  const at = ids.indexOf(after.last);
  if (at < 0) return 'unknown';
  const following = ids[at + 1];
  if (following === undefined) return across.nextPage === null ? 'absent' : 'unknown';
  return following > id ? 'absent' : 'unknown';
}

/** Candidates not listed in their window: each looked for by its content on every day. */
async function findMoved(context: RunContext, candidates: readonly RemovalCandidate[], today: string, signal: AbortSignal): Promise<Settlement> {
  const removedIds: number[] = [];
  const found: Threat[] = [];
  const pending: RemovalCandidate[] = [];
  let unsettled = 0;
  let failure: { error: unknown } | undefined;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < candidates.length) {
      const candidate = candidates[next++] as RemovalCandidate;
      try {
        const answer = await findListed(context, candidate, today, signal);
        if (answer === 'absent') removedIds.push(candidate.id);
        else if (answer === 'unknown') unsettled += 1;
        else found.push(answer);
      } catch (error) {
        failure ??= { error };
        pending.push(candidate);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(MAX_CHECKS_IN_FLIGHT, candidates.length) }, worker));
  if (failure === undefined) return { removedIds, found, unsettled, complete: true, pending: [] };
  return { removedIds, found, unsettled, complete: false, failure, pending: [...pending, ...candidates.slice(next)] };
}

/** The candidate as the service lists it now (under any day), 'absent', or 'unknown'. */
export async function findListed(context: RunContext, candidate: RemovalCandidate, today: string, signal: AbortSignal): Promise<Threat | 'absent' | 'unknown'> {
  const lookUp = (nextPage: string | null, perPage?: number): Promise<ThreatPage> => {
    const request = { startDate: ALL_DAYS_FROM, endDate: today, nextPage, perPage, query: candidate.content };
    return fetchThreatPage(context.deps.api, context.organization, request, signal);
  };
  let cursor: string | null = null;
  for (let page = 1; page <= MAX_QUERY_PAGES; page += 1) {
    const answer = await lookUp(cursor);
    const found = placeInAnswer(answer, candidate.id, page === 1);
    if (found === 'earlier') {
      if (answer.nextPage === null) return 'absent';
      cursor = answer.nextPage;
      continue;
    }
    if (found !== 'later') return found;
    // The answer passed its id between the page before and this one: one read across them.
    const across = pageAcross(page - 1);
    const spanning = placeInAnswer(await lookUp(across.page === 1 ? null : String(across.page), across.perPage), candidate.id, across.page === 1);
    return spanning === 'earlier' || spanning === 'later' ? 'unknown' : spanning;
  }
  return 'unknown';
}

/**
 * Where an id stands against one page of an id-ascending answer: the threat itself; 'absent' when
 * the page holds ids on both sides of it (or is the first and starts past it); 'earlier' when every
 * id is below it (read on); 'later' when every id is above it on a page after the first.
 */
export function placeInAnswer(answer: Pick<ThreatPage, 'threats'>, id: number, first: boolean): Threat | 'absent' | 'earlier' | 'later' {
  const match = answer.threats.find((threat) => threat.id === id);
  if (match) return match;
  const ids = answer.threats.map((threat) => threat.id);
  if (ids.length === 0 || Math.max(...ids) < id) return 'earlier';
  if (Math.min(...ids) > id) return first ? 'absent' : 'later';
  return 'absent';
}
