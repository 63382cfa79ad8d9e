// `threat-mirror lookup`: is each value blocked now? Exit 0 when any is, 1 when none is.
import type { Command } from '../cli/args.js';
import type { Allowlist } from '../allowlist/allowlist-entries.js';
import { openDatabaseReadOnly } from '../db/open-database.js';
import { databaseExists, EXIT_FAILED, EXIT_OK, EXIT_USAGE, type Io } from './io.js';

/** `allowlist`: THREAT_MIRROR_ALLOWLIST as read now; what it allows is named but not blocked (exit 1 if nothing else is). */
export async function runLookup(command: Extract<Command, { kind: 'lookup' }>, dbPath: string, io: Io, allowlist: Allowlist | undefined): Promise<number> {
  if (!databaseExists(dbPath, io)) return EXIT_USAGE;
  // Loaded here only: normalizing needs the Public Suffix List, which a sync's main thread does not.
  const [{ formatLookup, lookupValues, ThreatLookup }, { AllowMatcher }] = await Promise.all([import('./lookup.js'), import('../allowlist/allow-matcher.js')]);
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
    opened.sqlite.close();
  }
}
