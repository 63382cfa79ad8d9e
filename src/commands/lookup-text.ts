// The text form of a lookup's answer: one line a value with its verdict, the matches under it, and
// how fresh the mirror is. A "not blocked" the mirror cannot vouch for says so and why; a fresh
// lookup names the days it asked the service about.
import type { FreshLookupResult } from '../lookup/fresh-document.js';
import type { AllowedBy, LookupResult } from '../lookup/threat-lookup.js';
import { daysOf, type Vouched, type VouchedDocument } from '../lookup/verdict.js';

type Result = Vouched<LookupResult & Partial<Pick<FreshLookupResult, 'fresh'>>>;

export function formatLookup(document: VouchedDocument<LookupResult & Partial<Pick<FreshLookupResult, 'fresh'>>>): string {
  const lines: string[] = [];
  for (const result of document.results as readonly Result[]) {
    lines.push(`${result.value}: ${headline(result)}`);
    for (const match of result.matches as FreshLookupResult['matches']) {
      const how = match.match.by === 'expression' ? `expression ${match.match.expression}` : match.match.by;
      const allowed = match.allowed_by === undefined ? '' : `; allowed by ${describeAllowedBy(match.allowed_by)}`;
      const source = match.source === 'service' ? ', from the service, not yet mirrored' : '';
      lines.push(`  #${match.id} ${match.type} ${JSON.stringify(match.content)} for ${match.organizations.join(', ')} (by ${how}${allowed}${source})`);
    }
  }
  const { complete_through: through, history_from: from, stale } = document.mirror;
  const holds = through === null ? 'no complete run yet' : from === null ? `complete through ${through}` : `holds ${from} through ${through}`;
  lines.push(`(mirror ${holds}${stale ? '; stale' : ''})`);
  return `${lines.join('\n')}\n`;
}

/** `blocked (2 matches)`, `not blocked`, `not blocked: allowed locally (1 match)`, `cannot vouch: …why`; and what the service was asked. */
function headline(result: Result): string {
  const count = `${result.matches.length} ${result.matches.length === 1 ? 'match' : 'matches'}`;
  const listed = result.matches_truncated ? `${count} listed; the mirror holds more` : count;
  const asked = askedOfService(result);
  if (result.verdict === 'unknown') return `cannot vouch: ${result.reason}${asked}`;
  if (result.blocked) return `blocked (${listed}${asked})`;
  if (result.allowed) return `not blocked: allowed locally (${listed}${asked})`;
  return `not blocked${asked === '' ? '' : ` (${asked.slice(2)})`}`;
}

/** `; the service was asked about 2026-03-15 for acme`, or why it did not answer; nothing when it was not asked. */
function askedOfService(result: Result): string {
  const queries = result.fresh?.queries ?? [];
  if (queries.length === 0) return '';
  const said = queries.map((query) =>
    query.refreshed
      ? `the service was asked about ${daysOf(query)} for ${query.organization}`
      : `the service, asked about ${daysOf(query)} for ${query.organization}, did not answer whole: ${query.error ?? 'more pages than a fresh lookup reads'}`,
  );
  return `; ${said.join('; ')}`;
}

/** `line 3 "docs.example" (customer portal)`: where the allowlist says so, and why. */
function describeAllowedBy(by: AllowedBy): string {
  return `THREAT_MIRROR_ALLOWLIST line ${by.line} ${JSON.stringify(by.entry)}${by.reason === null ? '' : ` (${by.reason})`}`;
}
