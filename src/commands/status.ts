// `threat-mirror status`: each organization's sync (and whether the mirror can vouch for it),
// complete_through, open work, recent runs, service notices and file sizes (read-only). Exits 0
// when every organization asked about is synced and fresh, 3 otherwise, naming each and why.
import type { ReadConfig } from '../config.js';
import { openDatabaseReadOnly } from '../db/open-database.js';
import { readAllowlistStatus } from '../db/read/allowlist-status.js';
import { readServiceNotices } from '../db/read/service-notices.js';
import { SyncHealthReads } from '../db/read/sync-health.js';
import { clockStartingAt } from '../lib/days.js';
import { readSync } from '../lookup/sync-judgement.js';
import { organizationsAskedAbout } from './read-mirror.js';
import type { StatusCommand } from './command.js';
import { databaseExists, EXIT_CANNOT_VOUCH, EXIT_OK, EXIT_USAGE, type Io } from './io.js';
import { formatAllowlistStatus, formatFileSizes, formatServiceNotices, formatStatus, readFileSizes, readStatus } from './status-report.js';

export function showStatus(command: StatusCommand, { dbPath, organizationNames: configured, fixedNow }: ReadConfig, io: Io): number {
  // The writer's clock (THREAT_MIRROR_NOW) when one is fixed: staleness, rates and ETAs are measured against it.
  const now = clockStartingAt(fixedNow)();
  if (!databaseExists(dbPath, io)) return EXIT_USAGE;
  const opened = openDatabaseReadOnly(dbPath);
  try {
    const reads = new SyncHealthReads(opened.sqlite);
    const organizations = readSync(reads, organizationsAskedAbout(command.organization, configured, reads.heldOrganizations()), now);
    const statuses = readStatus(opened.sqlite, organizations, now);
    const problems = organizations.length === 0 ? ['no organization has synced into this file yet'] : organizations.flatMap((organization) => organization.problems);
    const notices = readServiceNotices(opened.sqlite);
    const files = readFileSizes(dbPath);
    const allowlist = readAllowlistStatus(opened.sqlite);
    io.stdout(
      command.json
        ? `${JSON.stringify({ database: dbPath, syncedAndFresh: problems.length === 0, problems, organizations: statuses, serviceNotices: notices, allowlist }, null, 2)}\n`
        : `${formatStatus(statuses)}${formatServiceNotices(notices)}${formatAllowlistStatus(allowlist)}${formatFileSizes(files)}${formatVerdict(problems)}`,
    );
    return problems.length === 0 ? EXIT_OK : EXIT_CANNOT_VOUCH;
  } finally {
    opened.close();
  }
}

/** The last line, for a person and a script alike. */
function formatVerdict(problems: readonly string[]): string {
  return problems.length === 0 ? 'every organization is synced and fresh\n' : `cannot vouch for the mirror (exit 3): ${problems.join('; ')}\n`;
}
