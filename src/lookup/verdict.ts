// Every answer says whether the mirror can vouch for it (issue 42). Above the matching: a result
// the matching (threat-lookup.ts), and with --fresh the service (fresh-document.ts), has answered
// gets a verdict and its reason, from the judgement of each organization asked about
// (sync-judgement.ts):
//   blocked      a threat in force matches (a block is a block, however old the mirror);
//   not_blocked  nothing in force matches, and every organization asked about is synced and fresh,
//                or the service listed it every threat of every day after its complete_through
//                (not a text search: fresh-lookup.ts); or the allowlist allows the value itself (a
//                local decision the service cannot change);
//   unknown      nothing in force matches, but the mirror cannot vouch for some organization: its
//                sync (stale, failing, never synced, retired), its scope (THREAT_MIRROR_ASSET_TYPES
//                leaves out a type whose threats would match the value), or its history (the walk
//                toward its configured start has not reached it: older days may hold a match).
// `threat-mirror lookup` exits 0, 1 or 3 by these, and /v1/lookup carries them.
import type { AllowMatcher } from '../allowlist/allow-matcher.js';
import { addDays } from '../lib/days.js';
import { TYPES_READ_AS } from '../url/lookup-fields.js';
import { parseAddress, parseEmail } from '../url/value-kinds.js';
import { readWebUrl } from '../url/web-url.js';
import type { FreshQuery } from './fresh-lookup.js';
import type { OrganizationSync, SyncState } from './sync-judgement.js';
import type { LookupMatch, LookupResult } from './threat-lookup.js';

export type Verdict = 'blocked' | 'not_blocked' | 'unknown';

/** An organization asked about, as an answer reports it. */
export interface OrganizationState {
  readonly organization: string;
  readonly state: SyncState;
  readonly complete_through: string | null;
  /** The first day from which it holds every day through complete_through whole; null before any. */
  readonly history_from: string | null;
  readonly last_success_at: string | null;
  /** Why the mirror cannot vouch for it now; empty when it is synced and fresh. */
  readonly problems: readonly string[];
}

export interface MirrorState {
  /** The earliest complete_through of the organizations asked about; null while any has none. */
  readonly complete_through: string | null;
  /** The latest history_from of the organizations asked about: every answer is whole from this day through complete_through; null while any holds none. */
  readonly history_from: string | null;
  /** True when any organization asked about has no successful incremental run within its threshold (or none). */
  readonly stale: boolean;
  readonly organizations: readonly OrganizationState[];
}

/** What a result may carry besides the mirror's answer: the service's, when it was asked (--fresh). */
type Answered = LookupResult & { readonly fresh?: { readonly queries: readonly FreshQuery[] } | undefined };

export type Vouched<R extends Answered> = R & { readonly verdict: Verdict; readonly reason: string };

export interface VouchedDocument<R extends Answered = LookupResult> {
  readonly results: ReadonlyArray<Vouched<R>>;
  readonly mirror: MirrorState;
}

/**
 * Each result with its verdict, and the state of the organizations asked about. `allowlist`:
 * THREAT_MIRROR_ALLOWLIST as the answer applied it.
 */
export function vouch<R extends Answered>(results: readonly R[], organizations: readonly OrganizationSync[], allowlist?: AllowMatcher): VouchedDocument<R> {
  return {
    results: results.map((result) => ({ ...result, ...verdictOf(result, organizations, allowlist) })),
    mirror: mirrorState(organizations),
  };
}

/** The exit code a script branches on: 0 when any value is blocked, else 3 when any is unknown, else 1. */
export function lookupExitCode(results: ReadonlyArray<{ readonly verdict: Verdict }>): 0 | 1 | 3 {
  if (results.some((result) => result.verdict === 'blocked')) return 0;
  return results.some((result) => result.verdict === 'unknown') ? 3 : 1;
}

function verdictOf(result: Answered, organizations: readonly OrganizationSync[], allowlist: AllowMatcher | undefined): { verdict: Verdict; reason: string } {
  if (result.blocked) return { verdict: 'blocked', reason: blockedBy(result) };
  const allowed = allowlist?.value(result.value);
  if (allowed !== undefined) return { verdict: 'not_blocked', reason: `allowed locally by THREAT_MIRROR_ALLOWLIST line ${allowed.line} ${JSON.stringify(allowed.value)}` };
  const nothing = result.allowed ? 'every threat that matches it is allowed locally' : 'no threat in force matches it';
  if (organizations.length === 0) return { verdict: 'unknown', reason: `${nothing}, but no organization has synced into this file yet` };
  const queries = result.fresh?.queries ?? [];
  const matching = typesMatching(result.value);
  const why = organizations.flatMap((organization) => {
    const unsynced = organization.problems.length > 0 && !askedOfService(organization, queries, matching) ? [...organization.problems, ...serviceShortfall(organization, queries, matching)] : [];
    const reasons = [...unsynced, ...scopeGap(organization, matching), ...historyGap(organization)];
    return reasons.length > 0 ? [reasons.join('; ')] : [];
  });
  if (why.length > 0) return { verdict: 'unknown', reason: `${nothing} in the mirror, but it cannot vouch for that: ${why.join('; ')}` };
  const fromService = organizations.filter((organization) => organization.problems.length > 0);
  const fresh = organizations.filter((organization) => organization.problems.length === 0).map((organization) => organization.organization);
  const parts = [
    ...(fresh.length > 0 ? [`${fresh.join(', ')} ${fresh.length === 1 ? 'is' : 'are'} synced and fresh`] : []),
    ...fromService.map((organization) => `the service, asked for every threat of ${organization.organization}'s days after ${organization.completeThrough}, lists none that matches`),
  ];
  return { verdict: 'not_blocked', reason: `${nothing}: ${parts.join('; ')}` };
}

/**
 * The service listed every threat of every day the mirror does not hold complete for this
 * organization, of every type that would match the value (`matching`; null: any type). Never for a
 * retired one: the mirror hides all of its threats, not only those days'.
 */
function askedOfService(organization: OrganizationSync, queries: readonly FreshQuery[], matching: readonly string[] | null): boolean {
  const query = queries.find((candidate) => candidate.organization === organization.organization);
  if (query === undefined || !query.listedAll || organization.state === 'retired' || organization.completeThrough === null) return false;
  const sent = query.assetTypes;
  const everyType = sent === undefined || (matching !== null && matching.every((type) => sent.includes(type)));
  return everyType && query.from <= addDays(organization.completeThrough, 1);
}

/**
 * The asset types whose threats match a value beyond its exact content (threat-lookup.ts): those
 * whose rows carry the fields the value is matched by (TYPES_READ_AS: a URL's Safe Browsing
 * expressions, an address's, an e-mail's). Null for any other value: only a threat's exact content
 * matches it, and that threat may be of any type.
 */
function typesMatching(value: string): readonly string[] | null {
  const types = [
    ...(readWebUrl(value) === null ? [] : TYPES_READ_AS.url),
    ...(parseAddress(value.trim()) === null ? [] : TYPES_READ_AS.address),
    ...(parseEmail(value.trim()) === null ? [] : TYPES_READ_AS.email),
  ];
  return types.length === 0 ? null : types;
}

/**
 * Why an organization's scope leaves the value's answer open: a type whose threats would match it
 * is one its mirror never holds (and a fresh query, sent with its scope's assetType, never lists).
 */
function scopeGap(organization: OrganizationSync, matching: readonly string[] | null): string[] {
  if (organization.state === 'retired') return [];
  const name = organization.organization;
  const scope = organization.assetTypes;
  const missing = scope === null ? [] : matching === null ? ['other'] : matching.filter((type) => !scope.includes(type));
  const outside =
    missing.length === 0
      ? []
      : [`organization "${name}" mirrors only ${scope?.join(', ')} (THREAT_MIRROR_ASSET_TYPES): ${matching === null ? 'a threat of a type outside it could hold this exact content' : `${missing.join(' and ')} threats would match it`}`];
  // A widened scope holds its added types from today on; older days have them once its walk ends.
  const { widening } = organization;
  const unwalked = widening.includes('*') || matching === null ? widening : matching.filter((type) => widening.includes(type));
  const walking =
    unwalked.length === 0
      ? []
      : [`organization "${name}" is still walking its mirrored days for the types its scope added (${widening.includes('*') ? 'every type' : unwalked.join(', ')}): older ones may be missing`];
  return [...outside, ...walking];
}

/**
 * Why the days an organization holds leave the answer open: its history walk (sync/history.ts) is
 * on and has not reached the configured start. A miss there would be "not blocked" for a threat
 * of a day not walked yet. With the walk off (THREAT_MIRROR_HISTORY_MAX_REQUESTS=0) nothing will
 * walk those days: the answer covers the days held, as its footnote says.
 */
function historyGap(organization: OrganizationSync): string[] {
  const { organization: name, historyWalkTarget: target, historyFrom, completeThrough } = organization;
  if (organization.state === 'retired' || target === null || completeThrough === null || (historyFrom !== null && historyFrom <= target)) return [];
  const held = historyFrom === null ? 'holds no day whole yet' : `holds ${historyFrom} through ${completeThrough}`;
  return [`organization "${name}" ${held}, and its history walk toward its configured start ${target} is under way: older days may hold a match`];
}

/** Why a fresh query did not make up for the mirror (nothing when none was sent). */
function serviceShortfall(organization: OrganizationSync, queries: readonly FreshQuery[], matching: readonly string[] | null): string[] {
  const query = queries.find((candidate) => candidate.organization === organization.organization);
  if (query === undefined) return [];
  if (!query.refreshed) return [`the service, asked about ${daysOf(query)}, did not answer whole (${query.error ?? 'more pages than a fresh lookup reads'})`];
  if (organization.completeThrough === null) return [`the service was asked about ${daysOf(query)} only, and the mirror holds no complete day before`];
  if (query.listedAll) return [`the service was asked for ${query.assetTypes?.join(', ') ?? 'every type'} only, and ${matching?.join(' or ') ?? 'any type'} threats would match it`];
  return [`the service's text search of ${daysOf(query)} found none, which cannot rule out a threat spelled otherwise (those days list more threats than a fresh lookup reads whole)`];
}

export function daysOf(query: Pick<FreshQuery, 'from' | 'to'>): string {
  return query.from === query.to ? query.from : `${query.from}..${query.to}`;
}

function blockedBy(result: Answered): string {
  // A match the service listed (fresh-document.ts) says so.
  const match = result.matches.find((candidate) => candidate.allowed === undefined) as (LookupMatch & { readonly source?: string }) | undefined;
  if (match === undefined) return 'a threat in force matches it';
  const source = match.source === 'service' ? ', listed by the service (not yet mirrored)' : '';
  return `threat #${match.id} (${match.type}) matches it for ${match.organizations.join(', ')}${source}`;
}

function mirrorState(organizations: readonly OrganizationSync[]): MirrorState {
  const through = organizations.map((organization) => organization.completeThrough);
  const complete = organizations.length > 0 && through.every((day) => day !== null);
  const from = organizations.map((organization) => organization.historyFrom);
  const held = complete && from.every((day) => day !== null);
  return {
    complete_through: complete ? (through as string[]).reduce((earliest, day) => (day < earliest ? day : earliest)) : null,
    history_from: held ? (from as string[]).reduce((latest, day) => (day > latest ? day : latest)) : null,
    stale: organizations.length === 0 || organizations.some((organization) => organization.stale),
    organizations: organizations.map((organization) => ({
      organization: organization.organization,
      state: organization.state,
      complete_through: organization.completeThrough,
      history_from: organization.historyFrom,
      last_success_at: organization.lastSuccessAt,
      problems: organization.problems,
    })),
  };
}
