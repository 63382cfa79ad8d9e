// `threat-mirror status`: checkpoints, open work, recent runs, service notices and file sizes (read-only).
import { existsSync } from 'node:fs';
import type { Command } from '../cli/args.js';
import { openDatabaseReadOnly } from '../db/open-database.js';
import { EXIT_FAILED, EXIT_OK, type Io } from './io.js';
import { formatAllowlistStatus, readAllowlistStatus } from './allowlist-status.js';
import { formatFileSizes, formatServiceNotices, formatStatus, readFileSizes, readServiceNotices, readStatus } from './status.js';

export function showStatus(command: Extract<Command, { kind: 'status' }>, dbPath: string, io: Io): number {
  if (!existsSync(dbPath)) {
    io.stderr(`threat-mirror: no database at ${dbPath} yet; run a sync first (or set THREAT_MIRROR_DB)\n`);
    return EXIT_FAILED;
  }
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
    opened.sqlite.close();
  }
}
