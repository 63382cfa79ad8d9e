// `threat-mirror snapshot`: a consistent copy of the mirror, with its manifest, replaced whole or not at all.
import type { ReadConfig } from '../config.js';
import { refusalOfDatabaseFile } from '../db/database-files.js';
import { filesBesideSnapshot } from '../db/snapshot-files.js';
import { errorMessage } from '../lib/errors.js';
import type { SnapshotCommand } from './command.js';
import { databaseExists, EXIT_FAILED, EXIT_OK, EXIT_USAGE, type Io } from './io.js';

export async function runSnapshot(command: SnapshotCommand, { dbPath }: Pick<ReadConfig, 'dbPath'>, io: Io): Promise<number> {
  if (!databaseExists(dbPath, io)) return EXIT_USAGE;
  const { writeSnapshot, manifestPathFor } = await import('../db/snapshot-copy.js');
  const refusal = refusalOfDatabaseFile('--out', command.out, filesBesideSnapshot(command.out), dbPath);
  if (refusal !== undefined) {
    io.stderr(`threat-mirror: ${refusal}\n`);
    return EXIT_USAGE;
  }
  try {
    const manifest = writeSnapshot(dbPath, command.out, new Date().toISOString());
    io.stdout(`snapshot ${command.out}: ${manifest.bytes} bytes, sha256 ${manifest.sha256}, max change_seq ${manifest.maxChangeSeq ?? '(none)'}; manifest ${manifestPathFor(command.out)}\n`);
    return EXIT_OK;
  } catch (error) {
    io.stderr(`threat-mirror: snapshot of ${dbPath} to ${command.out} failed, nothing was replaced: ${errorMessage(error)}\n`);
    return EXIT_FAILED;
  }
}
