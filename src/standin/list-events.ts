// Changes to the stand-in's threats timed against the walks that read them ("once page 2 of
// 03-01..03-07 is served, unblock threat 10000"), and faults aimed at one request of a walk by its
// body. With offset paging, as the service's page numbers are, each way a list can shift under a
// walk is produced with these: an unblock, a block, a change, a move to another day.
import type { StandinThreat } from './data.js';
import type { Fault } from './faults.js';
import type { ThreatStore } from './threat-store.js';

/** Which POST /threats/list requests an event is for; an absent field matches any. */
export interface ListRequestMatch {
  readonly key?: string;
  readonly startDate?: string;
  readonly endDate?: string;
  /** The page asked for: "1" for a request without next_page. */
  readonly page?: string;
  /** true: only requests with a `query` (a removal's confirmation); false: only requests without (a walk's pages). */
  readonly withQuery?: boolean;
}

/** What a change of a threat may set: a new blockedAt moves it to another day, a new organization to another organization's list. */
export type ThreatPatch = Partial<Pick<StandinThreat, 'content' | 'type' | 'blockedAt' | 'organization'>>;

/** A change of the service's data: unblock (remove), change or move (a new blockedAt), block (add). */
export interface ThreatChange {
  readonly remove?: readonly number[];
  readonly update?: ReadonlyArray<{ readonly id: number; readonly patch: ThreatPatch }>;
  readonly add?: readonly StandinThreat[];
}

export interface ListEvent {
  readonly match?: ListRequestMatch;
  /**
   * Applied once the matching request's page has been read from the list, before it is sent: the
   * walk's next request sees the changed list. A function (in-process only) may change anything.
   */
  readonly change?: ThreatChange | ((threats: ThreatStore) => void);
  /** The matching request is answered with this fault instead (then `change` does not apply). */
  readonly fault?: Fault;
  /** How many matching requests it applies to: 1 unless given; Infinity for every one. */
  readonly times?: number;
}

interface Pending {
  readonly event: ListEvent;
  remaining: number;
}

export class ListEvents {
  #pending: Pending[] = [];

  add(event: ListEvent): void {
    this.#pending.push({ event, remaining: event.times ?? 1 });
  }

  clear(): void {
    this.#pending = [];
  }

  /** The fault an event aims at this request, if any; consumes one use. */
  faultFor(key: string, body: unknown): Fault | undefined {
    const found = this.#pending.find((pending) => pending.event.fault !== undefined && matches(pending.event.match, key, body));
    if (!found) return undefined;
    this.#use(found);
    return found.event.fault;
  }

  /** The request's page has been read from the list: applies the changes timed after it. */
  served(key: string, body: unknown, threats: ThreatStore): void {
    for (const pending of [...this.#pending]) {
      const { change, fault } = pending.event;
      if (fault !== undefined || change === undefined || !matches(pending.event.match, key, body)) continue;
      this.#use(pending);
      applyChange(threats, change);
    }
  }

  #use(pending: Pending): void {
    pending.remaining -= 1;
    if (pending.remaining <= 0) this.#pending = this.#pending.filter((entry) => entry !== pending);
  }
}

export function applyChange(threats: ThreatStore, change: ThreatChange | ((threats: ThreatStore) => void)): void {
  if (typeof change === 'function') return change(threats);
  if (change.remove) threats.remove(change.remove);
  for (const { id, patch } of change.update ?? []) threats.update(id, patch);
  if (change.add) threats.add(change.add);
}

function matches(match: ListRequestMatch | undefined, key: string, body: unknown): boolean {
  if (!match) return true;
  const fields = (typeof body === 'object' && body !== null ? body : {}) as { startDate?: unknown; endDate?: unknown; next_page?: unknown; query?: unknown };
  if (match.key !== undefined && match.key !== key) return false;
  if (match.startDate !== undefined && match.startDate !== fields.startDate) return false;
  if (match.endDate !== undefined && match.endDate !== fields.endDate) return false;
  if (match.page !== undefined && match.page !== String(fields.next_page ?? '1')) return false;
  if (match.withQuery !== undefined && match.withQuery !== (fields.query !== undefined)) return false;
  return true;
}

/**
 * The control API's routes for the data and its timed changes, for a stand-in run as its own
 * process: POST /__standin/threats/remove {"ids": […]}, /__standin/threats/update
 * {"id", "patch": {content?, type?, blockedAt?, organization?}}, and /__standin/events {match?, change?, fault?,
 * times?}. Returns the answer, or undefined when the path is not one of these.
 */
export function listEventControl(path: string, body: unknown, threats: ThreatStore, events: ListEvents): { status: number; payload: unknown } | undefined {
  const input = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (path === '/__standin/threats/remove') {
    if (!Array.isArray(input.ids) || !input.ids.every((id) => Number.isSafeInteger(id))) return { status: 400, payload: { message: 'send {"ids": [threat ids]}' } };
    threats.remove(input.ids as number[]);
    return { status: 200, payload: { threats: threats.size } };
  }
  if (path === '/__standin/threats/update') {
    if (!Number.isSafeInteger(input.id) || typeof input.patch !== 'object' || input.patch === null) return { status: 400, payload: { message: 'send {"id": n, "patch": {"content"?, "type"?, "blockedAt"?, "organization"?}}' } };
    try {
      threats.update(input.id as number, input.patch as ThreatPatch);
    } catch (error) {
      return { status: 404, payload: { message: (error as Error).message } };
    }
    return { status: 200, payload: { ok: true } };
  }
  if (path === '/__standin/events') {
    if (input.change === undefined && input.fault === undefined) return { status: 400, payload: { message: 'send {"match"?, "change"?: {remove?, update?, add?}, "fault"?, "times"?}' } };
    events.add({
      ...(input.match === undefined ? {} : { match: input.match as ListRequestMatch }),
      ...(input.change === undefined ? {} : { change: input.change as ThreatChange }),
      ...(input.fault === undefined ? {} : { fault: input.fault as Fault }),
      ...(typeof input.times === 'number' ? { times: input.times } : {}),
    });
    return { status: 200, payload: { ok: true } };
  }
  return undefined;
}
