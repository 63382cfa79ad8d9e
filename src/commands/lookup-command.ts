// `threat-mirror lookup`: is each value blocked now? Exit 0 when any is, 1 when none is.
import type { Command } from '../cli/args.js';
import type { Allowlist } from '../allowlist/allowlist-entries.js';
import { openDatabaseReadOnly } from '../db/open-database.js';
import { AllowMatcher } from '../allowlist/allow-matcher.js';
import { type AllowedBy, type LookupDocument, lookupValues, ThreatLookup } from '../lookup/threat-lookup.js';
import { databaseExists, EXIT_FAILED, EXIT_OK, EXIT_USAGE, type Io } from './io.js';

/** `allowlist`: THREAT_MIRROR_ALLOWLIST as read now; what it allows is named but not blocked (exit 1 if nothing else is). */
export async function runLookup(command: Extract<Command, { kind: 'lookup' }>, dbPath: string, io: Io, allowlist: Allowlist | undefined): Promise<number> {
  if (!databaseExists(dbPath, io)) return EXIT_USAGE;
  const opened = openDatabaseReadOnly(dbPath);
  try {
    // The same answer as GET /v1/lookup; --json adds same-host threats that do not cover a URL, as context.
    const document = await lookupValues(new ThreatLookup(opened.sqlite), command.values, {
      organization: command.organization,
      sameHost: command.json,
      allowlist: allowlist === undefined ? undefined : new AllowMatcher(allowlist.entries),
    });
    io.stdout(command.json ? `${JSON.stringify(document, null, 2)}\n` : formatLookup(document));
    return document.results.some((result) => result.blocked) ? EXIT_OK : EXIT_FAILED;
  } finally {
    opened.close();
  }
}

function formatLookup(document: LookupDocument): string {
  const lines: string[] = [];
  for (const result of document.results) {
    if (!result.blocked && result.allowed === undefined) {
      lines.push(`${result.value}: not blocked`);
      continue;
    }
    const count = `${result.matches.length} ${result.matches.length === 1 ? 'match' : 'matches'}`;
    const listed = result.matches_truncated ? `${count} listed; the mirror holds more` : count;
    lines.push(`${result.value}: ${result.blocked ? 'blocked' : 'not blocked: allowed locally'} (${listed})`);
    for (const match of result.matches) {
      const how = match.match.by === 'expression' ? `expression ${match.match.expression}` : match.match.by;
      const allowed = match.allowed_by === undefined ? '' : `; allowed by ${describeAllowedBy(match.allowed_by)}`;
      lines.push(`  #${match.id} ${match.type} ${JSON.stringify(match.content)} for ${match.organizations.join(', ')} (by ${how}${allowed})`);
    }
  }
  const { complete_through: through, stale } = document.mirror;
  lines.push(`(mirror complete through ${through ?? 'no complete run yet'}${stale ? '; stale' : ''})`);
  return `${lines.join('\n')}\n`;
}

/** `line 3 "docs.example" (customer portal)`: where the allowlist says so, and why. */
function describeAllowedBy(by: AllowedBy): string {
  return `THREAT_MIRROR_ALLOWLIST line ${by.line} ${JSON.stringify(by.entry)}${by.reason === null ? '' : ` (${by.reason})`}`;
}
