// `threat-mirror status`: complete_through, open work, recent runs, service notices and file sizes (read-only).
import type { Command } from '../cli/args.js';
import { openDatabaseReadOnly } from '../db/open-database.js';
import { readAllowlistStatus } from '../db/read/allowlist-status.js';
import { readServiceNotices } from '../db/read/service-notices.js';
import { databaseExists, EXIT_OK, EXIT_USAGE, type Io } from './io.js';
import { formatAllowlistStatus, formatFileSizes, formatServiceNotices, formatStatus, readFileSizes, readStatus } from './status.js';

export function showStatus(command: Extract<Command, { kind: 'status' }>, dbPath: string, io: Io): number {
  if (!databaseExists(dbPath, io)) return EXIT_USAGE;
  const opened = openDatabaseReadOnly(dbPath);
  try {
    const statuses = readStatus(opened.sqlite, command.organization);
    const notices = readServiceNotices(opened.sqlite);
    const files = readFileSizes(dbPath);
    const allowlist = readAllowlistStatus(opened.sqlite);
    io.stdout(
      command.json
        ? `${JSON.stringify({ database: dbPath, files, organizations: statuses, serviceNotices: notices, allowlist }, null, 2)}\n`
        : `${formatStatus(statuses)}${formatServiceNotices(notices)}${formatAllowlistStatus(allowlist)}${formatFileSizes(files)}`,
    );
    return EXIT_OK;
  } finally {
    opened.close();
  }
}
