// `threat-mirror export --format F [--org NAME] [--out FILE] [--rules]`: reads the mirror
// read-only, writes the export to stdout or atomically to FILE, and sums up on stderr what it
// holds and what it left out.
import { resolve } from 'node:path';
import type { Allowlist } from '../allowlist/allowlist-entries.js';
import { AllowMatcher } from '../allowlist/allow-matcher.js';
import { openDatabaseReadOnly } from '../db/open-database.js';
import { buildExport, type ExportOptions } from './build-export.js';
import { ThreatSnapshot } from './current-threats.js';
import { writeExportFile, writeExportStream } from './write-export.js';
import { withSmallPageCache } from './page-cache.js';

export interface ExportCommand extends ExportOptions {
  readonly out: string | undefined;
}

export interface ExportIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: (text: string) => void;
}

/** Whether the mirror knows this organization at all: an unknown name is a mistake, not an empty list. */
export function mirrorKnowsOrganization(dbPath: string, organization: string): boolean {
  const opened = openDatabaseReadOnly(dbPath);
  try {
    return (
      opened.sqlite
        .prepare('SELECT 1 FROM organization_threats WHERE organization = ? UNION ALL SELECT 1 FROM sync_runs WHERE organization = ? LIMIT 1')
        .get(organization, organization) !== undefined
    );
  } finally {
    opened.sqlite.close(); // a reader never checkpoints (opened.close() would)
  }
}

export async function runExport(dbPath: string, command: ExportCommand, io: ExportIo, allowlist?: Allowlist): Promise<void> {
  const opened = openDatabaseReadOnly(dbPath);
  // Every row is read once, in order: a large page cache buys nothing here.
  withSmallPageCache(opened.sqlite);
  const snapshot = new ThreatSnapshot(opened.sqlite, command.organization, allowlist === undefined ? undefined : new AllowMatcher(allowlist.entries));
  try {
    // The command has the machine to itself: record formats use a second thread (parallel-render.ts).
    const built = await buildExport(snapshot, { ...command, twoThreads: { dbPath } });
    try {
      if (command.out === undefined) {
        await writeExportStream(io.stdout, built);
        io.stderr(`threat-mirror export: ${built.summary()}\n`);
        return;
      }
      const result = await writeExportFile(resolve(command.out), built);
      io.stderr(`threat-mirror export: ${built.summary()}; ${result.written ? 'written to' : 'unchanged:'} ${command.out}\n`);
    } finally {
      built.close();
    }
  } finally {
    snapshot.close();
    opened.sqlite.close(); // a reader never checkpoints (opened.close() would)
  }
}
