// `threat-mirror lookup`: is each value blocked now? Exit 0 when any is, 1 when none is. With
// --fresh, a value the mirror does not block is asked of the service (lookup/fresh-lookup.ts).
import { pino } from 'pino';
import type { Command } from '../cli/args.js';
import type { Allowlist } from '../allowlist/allowlist-entries.js';
import { AllowMatcher } from '../allowlist/allow-matcher.js';
import { type Environment, loadConfig, loadDatabasePath } from '../config.js';
import { openDatabaseReadOnly } from '../db/open-database.js';
import type { Database } from '../db/sqlite.js';
import { clockStartingAt, dayOf } from '../lib/days.js';
import { type FreshLookupDocument, type FreshLookupResult, refreshDocument } from '../lookup/fresh-document.js';
import { askService, type FreshOrganization } from '../lookup/fresh-lookup.js';
import { type AllowedBy, type LookupDocument, lookupValues, ThreatLookup } from '../lookup/threat-lookup.js';
import { apiOptionsFor } from '../session/writer-session.js';
import { databaseExists, EXIT_FAILED, EXIT_OK, EXIT_USAGE, type Io } from './io.js';

type LookupCommand = Extract<Command, { kind: 'lookup' }>;

/** `allowlist`: THREAT_MIRROR_ALLOWLIST as read now; what it allows is named but not blocked (exit 1 if nothing else is). */
export async function runLookup(command: LookupCommand, env: Environment, io: Io, allowlist: Allowlist | undefined): Promise<number> {
  // A fresh lookup needs the service's URL and keys: a bad one exits 2 before anything is read.
  const config = command.fresh ? loadConfig(env) : undefined;
  const dbPath = loadDatabasePath(env);
  if (!databaseExists(dbPath, io)) return EXIT_USAGE;
  const opened = openDatabaseReadOnly(dbPath);
  try {
    const matcher = allowlist === undefined ? undefined : new AllowMatcher(allowlist.entries);
    // The same answer as GET /v1/lookup; --json adds same-host threats that do not cover a URL, as context.
    const mirror = await lookupValues(new ThreatLookup(opened.sqlite), command.values, { organization: command.organization, sameHost: command.json, allowlist: matcher });
    const document = config === undefined ? mirror : await refreshed(mirror, { command, config, sqlite: opened.sqlite, allowlist: matcher });
    io.stdout(command.json ? `${JSON.stringify(document, null, 2)}\n` : formatLookup(document));
    return document.results.some((result) => result.blocked) ? EXIT_OK : EXIT_FAILED;
  } finally {
    opened.close();
  }
}

interface FreshContext {
  readonly command: LookupCommand;
  readonly config: ReturnType<typeof loadConfig>;
  readonly sqlite: Database;
  readonly allowlist: AllowMatcher | undefined;
}

/** The mirror's answer, with the values it does not block asked of each configured organization's key. */
function refreshed(document: LookupDocument, { command, config, sqlite, allowlist }: FreshContext): Promise<FreshLookupDocument> {
  const completeThrough = sqlite.prepare('SELECT complete_through FROM sync_checkpoints WHERE organization = ?').pluck();
  const organizations: FreshOrganization[] = config.organizations
    .filter((organization) => command.organization === undefined || organization.name === command.organization)
    .map((organization) => ({ ...organization, completeThrough: (completeThrough.get(organization.name) as string | undefined) ?? null }));
  // Nothing is logged: stdout is the answer. A failure is in the answer (refreshed: false, and why).
  const api = apiOptionsFor(config, pino({ level: 'silent' }));
  const today = dayOf(clockStartingAt(config.fixedNow)());
  return refreshDocument(document, (value) => askService(value, organizations, { api, today, initialDays: config.initialDays }), allowlist);
}

function formatLookup(document: LookupDocument | FreshLookupDocument): string {
  const lines: string[] = [];
  for (const result of document.results as ReadonlyArray<FreshLookupResult>) {
    const notRefreshed = result.fresh?.refreshed === false ? `; not refreshed: ${describeFailures(result)}` : '';
    if (!result.blocked && result.allowed === undefined) {
      const asked = result.fresh === undefined ? '' : result.fresh.refreshed ? ' (the service was asked too)' : ` (the mirror's answer${notRefreshed})`;
      lines.push(`${result.value}: not blocked${asked}`);
      continue;
    }
    const count = `${result.matches.length} ${result.matches.length === 1 ? 'match' : 'matches'}`;
    const listed = result.matches_truncated ? `${count} listed; the mirror holds more` : count;
    lines.push(`${result.value}: ${result.blocked ? 'blocked' : 'not blocked: allowed locally'} (${listed}${notRefreshed})`);
    for (const match of result.matches) {
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

/** `line 3 "docs.example" (customer portal)`: where the allowlist says so, and why. */
function describeAllowedBy(by: AllowedBy): string {
  return `THREAT_MIRROR_ALLOWLIST line ${by.line} ${JSON.stringify(by.entry)}${by.reason === null ? '' : ` (${by.reason})`}`;
}

function describeFailures(result: FreshLookupResult): string {
  return (result.fresh?.queries ?? [])
    .filter((query) => !query.refreshed)
    .map((query) => `${query.organization}: ${query.error ?? 'more pages than a fresh lookup reads'}`)
    .join('; ');
}
