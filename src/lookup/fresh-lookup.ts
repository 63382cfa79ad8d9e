// `lookup --fresh` (issue 30): a value the mirror does not block is asked of the service itself,
// over the days each organization's mirror has not finished (after its complete_through, through
// today): one window, its cursors walked, under the key's budget and retry policy, the whole within
// a few seconds. Returned threats match by the mirror's own rules. Nothing is written: the next
// sync stores what the service listed.
//
// Two ways to ask, for two needs. To find a block, `query` (a text a matching threat's content
// usually holds) keeps the pages few. To vouch for a miss where the mirror cannot (an organization
// stale or failing), only the window's every threat will do: the service's text search is not
// documented, and a content may spell the host otherwise (`%65vil.com`, `3232235777`, `evil。com`),
// which the mirror's reader matches and no text sent finds. So such an organization is first
// asked without `query`; only a window that fits in the pages read vouches (`listedAll`).
import { isIP } from 'node:net';
import { domainToUnicode } from 'node:url';
import type { ApiCaller, ApiClientOptions } from '../api/service-call.js';
import { fetchThreatPage } from '../api/threat-client.js';
import { addDays } from '../lib/days.js';
import { errorMessage } from '../lib/errors.js';
import type { Threat } from '../records.js';
import { coveringExpressions } from '../url/expressions.js';
import { deriveLookupFields, registrableDomainOf } from '../url/lookup-fields.js';
import { parseAddress, parseEmail } from '../url/value-kinds.js';
import { readWebUrl } from '../url/web-url.js';
import type { OrganizationSync } from './sync-judgement.js';
import type { LookupMatchKind } from './threat-lookup.js';

/** The whole fresh query of one value, every organization together, at most this long: then the mirror's answer stands. */
export const FRESH_TIMEOUT_MS = 3_000;
/** Pages of one organization's answer read at most: a query text shared by more threats is answered from what was read. */
const MAX_FRESH_PAGES = 5;

export interface FreshOrganization extends ApiCaller {
  /** Its complete_through in the mirror: the service is asked about the days after it; null: its first days. */
  readonly completeThrough: string | null;
  /** The mirror cannot vouch for it now (sync-judgement.ts): its window is read whole if it can be, to vouch for a miss. */
  readonly vouching: boolean;
}

export interface FreshSettings {
  readonly api: ApiClientOptions;
  readonly today: string;
  /** An organization without a complete day is asked about this many days, ending today. */
  readonly initialDays: number;
  readonly timeoutMs?: number;
  /**
   * Whether this organization's key may send a fresh query now (FreshCap); absent: always. Asked
   * only by a query that sends a request: one answered from a listing another value of the answer
   * read takes no token.
   */
  readonly admit?: ((organization: FreshOrganization) => boolean) | undefined;
  /** Told the requests each organization's query sent. */
  readonly spent?: ((organization: FreshOrganization, requests: number) => void) | undefined;
  /**
   * Windows read whole, shared by the values of one answer (the CLI's, and /v1/lookup's): a stale
   * organization's window is listed once, not once a value (1,000 values were up to 5,000 requests).
   */
  readonly listings?: Map<string, Promise<WindowRead>> | undefined;
  /** Aborts every request (the asker is gone: daemon/fresh-http.ts). */
  readonly signal?: AbortSignal | undefined;
}

/**
 * What a fresh lookup needs of an organization's judgement (sync-judgement.ts): the one the answer's
 * verdict is judged by, carried with the question so the service is asked by that same judgement.
 */
export type FreshJudgement = Pick<OrganizationSync, 'organization' | 'completeThrough' | 'problems'>;

/**
 * An organization asked about, as judged now: the days after its complete_through are asked, and
 * read whole when the mirror cannot vouch for it and they are all the mirror lacks (one that never
 * completed a day cannot be vouched for by its first days: verdict.ts).
 */
export function freshOrganization(caller: ApiCaller, judged: Pick<FreshJudgement, 'completeThrough' | 'problems'>): FreshOrganization {
  return { ...caller, completeThrough: judged.completeThrough, vouching: judged.problems.length > 0 && judged.completeThrough !== null };
}

/** How one organization's fresh query went. */
export interface FreshQuery {
  readonly organization: string;
  readonly from: string;
  readonly to: string;
  /** The service answered every page asked for in time. */
  readonly refreshed: boolean;
  /** Every threat of the window was read, no text filter: a miss is then the service's word (lookup/verdict.ts). */
  readonly listedAll: boolean;
  /** The `assetType` the requests carried (the organization's scope as this process reads it); absent: every type. */
  readonly assetTypes?: readonly string[];
  /** Requests sent, retries included. */
  readonly requests: number;
  readonly error?: string;
}

const OVER_CAP = 'fresh lookups through this key are over their cap of requests per second (THREAT_MIRROR_FRESH_MAX_RPS); the mirror answered';

/** How a query ended: answered whole, cut after MAX_FRESH_PAGES, not sent (its key over the cap), or failed (an error, the deadline). */
export type FreshOutcome = 'refreshed' | 'partial' | 'capped' | 'failed';

export function freshOutcome(query: FreshQuery): FreshOutcome {
  if (query.refreshed) return 'refreshed';
  if (query.error === undefined) return 'partial';
  return query.error === OVER_CAP ? 'capped' : 'failed';
}

/** A threat the service listed that matches the value, how, and through which organization's key. */
export type FreshMatch = { readonly threat: Threat; readonly organization: string; readonly match: LookupMatchKind };

/** The matches, and how each organization's query went. */
export type FreshAnswer = { readonly matches: readonly FreshMatch[]; readonly queries: readonly FreshQuery[] };

/** The answer for a value the service was not asked about, or that failed as a whole: `error` says why. */
export function unansweredFresh(error: string): FreshAnswer {
  return { matches: [], queries: [{ organization: '*', from: '', to: '', refreshed: false, listedAll: false, requests: 0, error }] };
}

export async function askService(value: string, organizations: readonly FreshOrganization[], settings: FreshSettings): Promise<FreshAnswer> {
  const matcher = valueMatcher(value);
  const timeout = AbortSignal.timeout(settings.timeoutMs ?? FRESH_TIMEOUT_MS);
  const deadline = settings.signal === undefined ? timeout : AbortSignal.any([timeout, settings.signal]);
  const answers = await Promise.all(
    organizations.map(async (organization) => {
      const answer = await askOrganization(organization, matcher, settings, deadline);
      if (answer.query.requests > 0) settings.spent?.(organization, answer.query.requests);
      return answer;
    }),
  );
  return { matches: answers.flatMap((answer) => answer.matches), queries: answers.map((answer) => answer.query) };
}

async function askOrganization(organization: FreshOrganization, matcher: ValueMatcher, settings: FreshSettings, deadline: AbortSignal): Promise<{ matches: FreshMatch[]; query: FreshQuery }> {
  const from = firstDayToAsk(organization, settings);
  const window = { organization: organization.name, from, to: settings.today, ...(organization.assetTypes === undefined ? {} : { assetTypes: organization.assetTypes }) };
  const matches = new Map<number, FreshMatch>();
  let requests = 0;
  const sent = (count: number): void => {
    requests += count;
  };
  // The key's token is taken before this query's first request, and only if it sends one.
  let admitted = settings.admit === undefined;
  const admit = (): boolean => (admitted ||= settings.admit?.(organization) !== false);
  // What a listing another value read found stays: a match is a match, whatever the cap.
  const overCap = (): { matches: FreshMatch[]; query: FreshQuery } => ({ matches: [...matches.values()], query: { ...window, refreshed: false, listedAll: false, requests, error: OVER_CAP } });
  const take = (read: WindowRead): boolean => {
    for (const threat of read.threats) {
      const match = matcher.match(threat);
      if (match !== null && !matches.has(threat.id)) matches.set(threat.id, { threat, organization: organization.name, match });
    }
    return read.whole;
  };
  try {
    if (organization.vouching) {
      const listing = await listingOf(organization, from, { settings, deadline, sent, admit });
      if (listing === undefined) return overCap();
      if (take(listing)) return { matches: [...matches.values()], query: { ...window, refreshed: true, listedAll: true, requests } };
    }
    if (!admit()) return overCap();
    let refreshed = true;
    for (const query of matcher.queries) refreshed = take(await readWindow(organization, { from, query }, settings, deadline, sent)) && refreshed;
    return { matches: [...matches.values()], query: { ...window, refreshed, listedAll: false, requests } };
  } catch (error) {
    const why = deadline.aborted ? `the service did not answer within ${(settings.timeoutMs ?? FRESH_TIMEOUT_MS) / 1000} s` : errorMessage(error);
    return { matches: [...matches.values()], query: { ...window, refreshed: false, listedAll: false, requests: requests + 1, error: why } };
  }
}

/** The threats of a window's pages read, and whether they were all of its pages. */
export interface WindowRead {
  readonly threats: readonly Threat[];
  readonly whole: boolean;
}

/** The window's pages holding `query` (every page when undefined), up to MAX_FRESH_PAGES; `sent` is told each request. */
async function readWindow(organization: FreshOrganization, { from, query }: { from: string; query: string | undefined }, settings: FreshSettings, deadline: AbortSignal, sent: (requests: number) => void): Promise<WindowRead> {
  const threats: Threat[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < MAX_FRESH_PAGES; page += 1) {
    const answer = await fetchThreatPage(settings.api, organization, { startDate: from, endDate: settings.today, nextPage: cursor, query }, deadline);
    sent(1 + answer.retries);
    threats.push(...answer.threats);
    cursor = answer.nextPage;
    if (cursor === null) return { threats, whole: true };
  }
  return { threats, whole: false };
}

/**
 * The window's every threat, read once for all the values of an answer that shares
 * `settings.listings`: another value's listing when it succeeds (no request, no token), else this
 * value's own, its token taken first (undefined: over the cap), its requests counted by this value.
 * A listing that failed (a request hung past its value's deadline, an error) leaves the map, so the
 * values after it list anew; those that waited on it read on their own.
 */
async function listingOf(
  organization: FreshOrganization,
  from: string,
  { settings, deadline, sent, admit }: { settings: FreshSettings; deadline: AbortSignal; sent: (requests: number) => void; admit: () => boolean },
): Promise<WindowRead | undefined> {
  const key = `${organization.name}\n${from}\n${settings.today}`;
  const shared = settings.listings?.get(key);
  if (shared !== undefined) {
    const read = await shared.catch(() => undefined);
    if (read !== undefined) return read;
    // Its own deadline gone too (it waited as long): no token taken for a request never sent.
    if (deadline.aborted) throw deadline.reason;
    return admit() ? readWindow(organization, { from, query: undefined }, settings, deadline, sent) : undefined;
  }
  if (!admit()) return undefined;
  const listing = readWindow(organization, { from, query: undefined }, settings, deadline, sent);
  settings.listings?.set(key, listing);
  listing.catch(() => {
    if (settings.listings?.get(key) === listing) settings.listings.delete(key);
  });
  return listing;
}

/** The day after the organization's complete_through (its first days when it has none). */
function firstDayToAsk(organization: FreshOrganization, settings: FreshSettings): string {
  return organization.completeThrough === null ? addDays(settings.today, -(settings.initialDays - 1)) : addDays(organization.completeThrough, 1);
}

/**
 * Fresh requests per second per key, so that lookups never starve the sync of its key's budget: a
 * bucket of `perSecond` tokens per key, refilled continuously; a query is admitted while its key's
 * bucket holds one, and takes one per request it sent (it may go below zero: the next ones wait longer).
 */
export class FreshCap {
  readonly #perSecond: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(perSecond: number, now: () => number = () => performance.now()) {
    this.#perSecond = perSecond;
    this.#now = now;
  }

  /** Takes the token of the query's first request at once, so queries sent together count together. */
  admit(key: string): boolean {
    const bucket = this.#bucket(key);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** The requests an admitted query sent beyond its first. */
  spend(key: string, requests: number): void {
    this.#bucket(key).tokens -= Math.max(0, requests - 1);
  }

  #bucket(key: string): { tokens: number; at: number } {
    const now = this.#now();
    const bucket = this.#buckets.get(key) ?? { tokens: this.#perSecond, at: now };
    bucket.tokens = Math.min(this.#perSecond, bucket.tokens + ((now - bucket.at) / 1000) * this.#perSecond);
    bucket.at = now;
    this.#buckets.set(key, bucket);
    return bucket;
  }
}

interface ValueMatcher {
  /**
   * The texts sent as `query`, one walk each: every threat that would match holds one of them (the
   * service filters contents by substring, ignoring case). Two for a host with Unicode labels: a
   * content may write it in either form.
   */
  readonly queries: readonly string[];
  match(threat: Threat): LookupMatchKind | null;
}

/**
 * The mirror's rules (threat-lookup.ts) applied to a threat as the service sends it: exact content,
 * a URL's Safe Browsing expressions, an address, an e-mail. For a URL the query is its host's
 * registrable domain (hostQuery); for an address, the address; for an e-mail, the address; else
 * the value.
 */
export function valueMatcher(value: string): ValueMatcher {
  const trimmed = value.trim();
  const url = readWebUrl(value);
  const expressions = new Set(url === null ? [] : coveringExpressions(url));
  const address = parseAddress(trimmed);
  const email = parseEmail(trimmed);
  const query = url !== null ? hostQuery(url.host) : (address?.address ?? email?.email ?? trimmed);
  const unicode = url !== null && /(^|\.)xn--/i.test(query) ? domainToUnicode(query) : '';
  return {
    queries: unicode === '' || unicode === query ? [query] : [query, unicode],
    match(threat) {
      if (threat.content === value) return { by: 'exact' };
      const fields = deriveLookupFields(threat.type, threat.content);
      if (fields.urlExpression !== null && expressions.has(fields.urlExpression)) return { by: 'expression', expression: fields.urlExpression };
      if (address !== null && fields.address === address.address && (address.addressChain === null || (fields.addressNamespace === address.addressNamespace && fields.addressChain === address.addressChain))) {
        return { by: 'address' };
      }
      if (email !== null && fields.email === email.email) return { by: 'email' };
      return null;
    },
  };
}

/**
 * The text every threat covering a URL on this host holds: its registrable domain, since a
 * covering expression's host is the host or a parent of it. Only a block of a bare public suffix
 * (`co.uk`, `github.io`) is not sent back, a block no list should carry; the last two labels
 * instead would make `bank.co.uk` ask for every threat under `co.uk`, more than the pages a fresh
 * lookup reads. An IP address is its own query.
 */
function hostQuery(host: string): string {
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0) return host;
  return registrableDomainOf(host) ?? host.split('.').slice(-2).join('.');
}
