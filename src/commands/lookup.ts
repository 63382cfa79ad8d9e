// `threat-mirror lookup`: is each value blocked now, and can the mirror vouch for the answer? Exit
// 0 when any value is blocked, 1 when none is and every organization asked about is synced and
// fresh, 3 when the mirror cannot vouch for a "not blocked" (lookup/verdict.ts). With --fresh, a
// value the mirror does not block is asked of the service (lookup/fresh-lookup.ts).
import { pino } from 'pino';
import { type AllowMatcher, matcherFor } from '../allowlist/allow-matcher.js';
import { apiOptionsFor } from '../api/client-options.js';
import type { Config, LookupConfig } from '../config.js';
import { dayOf } from '../lib/days.js';
import { askValues, type FreshLookupDocument, refreshDocument } from '../lookup/fresh-document.js';
import { type FreshOrganization, freshOrganization } from '../lookup/fresh-lookup.js';
import type { OrganizationSync } from '../lookup/sync-judgement.js';
import { type LookupDocument, lookupValues, ThreatLookup } from '../lookup/threat-lookup.js';
import { lookupExitCode, vouch } from '../lookup/verdict.js';
import type { LookupCommand } from './command.js';
import type { Io } from './io.js';
import { formatLookup } from './lookup-text.js';
import { readJudgedMirror } from './read-mirror.js';

/** `config`: what the entry read of the environment; with --fresh, the service's URL and keys too. */
export function runLookup(command: LookupCommand, config: LookupConfig, io: Io): Promise<number> {
  const { allowlist, service } = config;
  // Freshness is judged on the writer's clock.
  return readJudgedMirror(config, command.organization, io, async ({ sqlite, organizations, now }) => {
    const matcher = matcherFor(allowlist?.entries);
    // The same answer as GET /v1/lookup; --json adds same-host threats that do not cover a URL, as context.
    const mirror = await lookupValues(new ThreatLookup(sqlite), command.values, { organization: command.organization, sameHost: command.json, allowlist: matcher });
    const answered = service === undefined ? mirror : await refreshed(mirror, { config: service, organizations, today: dayOf(now), allowlist: matcher });
    const document = vouch(answered.results, organizations, matcher);
    io.stdout(command.json ? `${JSON.stringify(document, null, 2)}\n` : formatLookup(document));
    return lookupExitCode(document.results);
  });
}

interface FreshContext {
  readonly config: Config;
  /** Those asked about, as judged: each is asked about the days after its complete_through. */
  readonly organizations: readonly OrganizationSync[];
  readonly today: string;
  readonly allowlist: AllowMatcher | undefined;
}

/**
 * The mirror's answer, with the values it does not block asked of each organization asked about
 * that has a key. Not a retired one: the file answers for none of its threats, whatever the service
 * lists of its last days (verdict.ts judges it unknown).
 */
function refreshed(document: LookupDocument, { config, organizations, today, allowlist }: FreshContext): Promise<FreshLookupDocument> {
  const judged = new Map(organizations.filter((organization) => organization.state !== 'retired').map((organization) => [organization.organization, organization]));
  const asked: FreshOrganization[] = config.organizations.flatMap((organization) => {
    const judgement = judged.get(organization.name);
    return judgement === undefined ? [] : [freshOrganization(organization, judgement)];
  });
  // Nothing is logged: stdout is the answer. A failure is in the answer (refreshed: false, and why).
  const api = apiOptionsFor(config, pino({ level: 'silent' }));
  return refreshDocument(document, (values) => askValues(values, asked, { api, today, initialDays: config.initialDays }), allowlist);
}
