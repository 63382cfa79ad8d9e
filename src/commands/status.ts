// `threat-mirror status`: each organization's sync (and whether the mirror can vouch for it),
// complete_through, open work, recent runs, service notices and file sizes (read-only). Exits 0
// when every organization asked about is synced and fresh, 3 otherwise, naming each and why.
import type { ReadConfig } from '../config.js';
import { readRetiredOrganizations, type RetiredOrganization } from '../db/read/answered-organizations.js';
import { readAllowlistStatus } from '../db/read/allowlist-status.js';
import { readServiceNotices } from '../db/read/notice-reads.js';
import type { StatusCommand } from './command.js';
import { EXIT_CANNOT_VOUCH, EXIT_OK, type Io } from './io.js';
import { readJudgedMirror } from './read-mirror.js';
import { formatAllowlistStatus, formatFileSizes, formatServiceNotices, formatStatus, readFileSizes, readStatus } from './status-report.js';

export function showStatus(command: StatusCommand, config: ReadConfig, io: Io): Promise<number> {
  const { dbPath } = config;
  // Staleness, rates and ETAs are measured against the writer's clock.
  return readJudgedMirror(config, command.organization, io, ({ sqlite, organizations, now }) => {
    const statuses = readStatus(sqlite, organizations, now);
    const problems = organizations.length === 0 ? ['no organization has synced into this file yet'] : organizations.flatMap((organization) => organization.problems);
    const notices = readServiceNotices(sqlite);
    const files = readFileSizes(dbPath);
    const allowlist = readAllowlistStatus(sqlite);
    const retired = readRetiredOrganizations(sqlite);
    io.stdout(
      command.json
        ? `${JSON.stringify({ database: dbPath, syncedAndFresh: problems.length === 0, problems, organizations: statuses, retiredOrganizations: retired, serviceNotices: notices, allowlist }, null, 2)}\n`
        : `${formatStatus(statuses)}${formatRetired(retired)}${formatServiceNotices(notices)}${formatAllowlistStatus(allowlist)}${formatFileSizes(files)}${formatVerdict(problems)}`,
    );
    return problems.length === 0 ? EXIT_OK : EXIT_CANNOT_VOUCH;
  });
}

/** Organizations the file holds but answers nothing for: a configuration that left one out by mistake shows here. */
function formatRetired(retired: readonly RetiredOrganization[]): string {
  return retired
    .map(({ organization, retiredAt, threats }) => `${organization}: no longer configured since ${retiredAt}; its ${threats} threats are hidden from every answer, kept until it is configured again\n`)
    .join('');
}

/** The last line, for a person and a script alike. */
function formatVerdict(problems: readonly string[]): string {
  return problems.length === 0 ? 'every organization is synced and fresh\n' : `cannot vouch for the mirror (exit 3): ${problems.join('; ')}\n`;
}
