// A lookup's answer refreshed by the service (issue 30): the mirror's answer first; each value it
// does not block is asked of the service (fresh-lookup.ts), and every match says where it came
// from: `source: "mirror"` or `"service"`. A value whose question the service did not answer in
// time (or at all) keeps the mirror's answer, marked `refreshed: false`.
import type { AllowMatcher } from '../allowlist/allow-matcher.js';
import { errorMessage } from '../lib/errors.js';
import { deriveLookupFields } from '../url/lookup-fields.js';
import { askService, type FreshAnswer, type FreshOrganization, type FreshQuery, type FreshSettings, unansweredFresh } from './fresh-lookup.js';
import type { LookupDocument, LookupMatch, LookupResult } from './threat-lookup.js';
import { namedEntry } from './value-matches.js';

export type MatchSource = 'mirror' | 'service';

export interface FreshLookupResult extends LookupResult {
  readonly matches: ReadonlyArray<LookupMatch & { readonly source: MatchSource }>;
  /** Present when the service was asked (the mirror did not block the value). */
  readonly fresh?: { readonly refreshed: boolean; readonly queries: readonly FreshQuery[] };
}

export interface FreshLookupDocument extends LookupDocument {
  readonly results: readonly FreshLookupResult[];
}

/** Values asked of the service at once at most (each organization's key budget still limits the requests). */
const VALUES_IN_FLIGHT = 8;

/**
 * `allowlist`: THREAT_MIRROR_ALLOWLIST as the mirror's answer applied it: a value it allows is not
 * asked about, and a threat the service lists that it allows is named, not blocking, as in the
 * mirror. A value whose matches in the mirror are all allowed, but not itself, is asked: the
 * service may list it otherwise (an address allowed on one chain, blocked on another).
 */
export async function refreshDocument(document: LookupDocument, askAll: (values: readonly string[]) => Promise<readonly FreshAnswer[]>, allowlist?: AllowMatcher): Promise<FreshLookupDocument> {
  const results: FreshLookupResult[] = document.results.map((result) => ({ ...result, matches: result.matches.map((match) => ({ ...match, source: 'mirror' as const })) }));
  const misses = results
    .map((result, index) => ({ result, index }))
    .filter(({ result }) => !result.blocked && allowlist?.value(result.value) === undefined);
  if (misses.length === 0) return { ...document, results };
  const answers = await askAll(misses.map(({ result }) => result.value));
  misses.forEach(({ result, index }, at) => {
    const answer = answers[at];
    if (answer !== undefined) results[index] = withServiceAnswer(result, answer, allowlist);
  });
  return { ...document, results };
}

/**
 * Each value's answer, VALUES_IN_FLIGHT values at a time. The values of one answer share its window
 * listings (fresh-lookup.ts: FreshSettings.listings): a stale window is listed once, not once a
 * value. Once `settings.signal` aborts, the values not yet asked are answered with its reason,
 * unasked. `answered` is told each value the service was asked about, as it is answered.
 */
export async function askValues(values: readonly string[], organizations: readonly FreshOrganization[], settings: Omit<FreshSettings, 'listings'>, answered?: (answer: FreshAnswer) => void): Promise<FreshAnswer[]> {
  const { signal } = settings;
  const shared: FreshSettings = { ...settings, listings: new Map() };
  const answers: FreshAnswer[] = [];
  for (let offset = 0; offset < values.length; offset += VALUES_IN_FLIGHT) {
    const slice = values.slice(offset, offset + VALUES_IN_FLIGHT);
    if (signal?.aborted) {
      answers.push(...slice.map(() => unansweredFresh(`not asked: ${errorMessage(signal.reason)}`)));
      continue;
    }
    const ask = async (value: string): Promise<FreshAnswer> => {
      const answer = await askService(value, organizations, shared);
      answered?.(answer);
      return answer;
    };
    answers.push(...(await Promise.all(slice.map(ask))));
  }
  return answers;
}

function withServiceAnswer(result: FreshLookupResult, answer: FreshAnswer, allowlist: AllowMatcher | undefined): FreshLookupResult {
  // The mirror's matches (all allowed, or it would have blocked) stay, named as the mirror's.
  const byId = new Map<number, LookupMatch & { source: MatchSource }>(result.matches.map((match) => [match.id, match]));
  for (const { threat, organization, match } of answer.matches) {
    const seen = byId.get(threat.id);
    if (seen) {
      if (!seen.organizations.includes(organization)) byId.set(threat.id, { ...seen, organizations: [...seen.organizations, organization].sort() });
      continue;
    }
    const allowedBy = allowlist?.threat({ content: threat.content, ...deriveLookupFields(threat.type, threat.content) });
    const listed = { id: threat.id, content: threat.content, type: threat.type, organizations: [organization], match, source: 'service' as const };
    byId.set(threat.id, allowedBy === undefined ? listed : { ...listed, allowed: true, allowed_by: namedEntry(allowedBy) });
  }
  const matches = [...byId.values()].sort((a, b) => a.id - b.id);
  const blocked = matches.some((match) => match.allowed === undefined);
  const { allowed: _mirrorsAllowed, ...mirrors } = result;
  return {
    ...mirrors,
    blocked,
    ...(matches.length > 0 && !blocked ? { allowed: true as const } : {}),
    matches,
    fresh: { refreshed: answer.queries.every((query) => query.refreshed), queries: answer.queries },
  };
}
