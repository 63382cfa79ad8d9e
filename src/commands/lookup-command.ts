// `threat-mirror lookup`: is each value blocked now? Exit 0 when any is, 1 when none is.
import type { Command } from '../cli/args.js';
import { openDatabaseReadOnly } from '../db/open-database.js';
import { databaseExists, EXIT_FAILED, EXIT_OK, EXIT_USAGE, type Io } from './io.js';

export async function runLookup(command: Extract<Command, { kind: 'lookup' }>, dbPath: string, io: Io): Promise<number> {
  if (!databaseExists(dbPath, io)) return EXIT_USAGE;
  // Loaded here only: normalizing needs the Public Suffix List, which a sync's main thread does not.
  const { formatLookup, lookupValues, ThreatLookup } = await import('./lookup.js');
  const opened = openDatabaseReadOnly(dbPath);
  try {
    // The same answer as GET /v1/lookup; --json adds same-host threats that do not cover a URL, as context.
    const document = await lookupValues(new ThreatLookup(opened.sqlite), command.values, { organization: command.organization, sameHost: command.json });
    io.stdout(command.json ? `${JSON.stringify(document, null, 2)}\n` : formatLookup(document));
    return document.results.some((result) => result.blocked) ? EXIT_OK : EXIT_FAILED;
  } finally {
    opened.sqlite.close();
  }
}
