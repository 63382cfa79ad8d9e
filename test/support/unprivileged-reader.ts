// Runs a reader that cannot write the database's folder, as on a read-only mount. Root ignores
// folder permissions, so as root the reader runs as nobody (uid 65534, through setpriv); as
// another user the folder and its files are made read-only for the read.
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const READER = join(dirname(fileURLToPath(import.meta.url)), 'readonly-reader.mjs');
const NOBODY = ['--reuid=65534', '--regid=65534', '--clear-groups'];

export interface ReaderView {
  readonly ok: boolean;
  readonly uid?: number;
  readonly code?: string;
  readonly message?: string;
  readonly journalMode?: string;
  readonly threats?: number;
  readonly links?: number;
  readonly inserted?: number;
  readonly quickCheck?: string;
  /** The ids of the threats it saw, in one read transaction with the counts. */
  readonly ids?: number[];
}

const isRoot = process.getuid?.() === 0;

/** Why a reader that cannot write the folder cannot be run here, or undefined when it can. */
export function unprivilegedReaderUnavailable(): string | undefined {
  if (!isRoot) return undefined;
  // nobody must be able to run node and load better-sqlite3 from this checkout.
  const probe = spawnSync('setpriv', [...NOBODY, process.execPath, '-e', "import('better-sqlite3').then(() => process.exit(0), () => process.exit(3))"], {
    cwd: join(dirname(READER), '..', '..'),
    encoding: 'utf8',
  });
  if (probe.error) return `setpriv is not available (${probe.error.message}); install util-linux`;
  if (probe.status !== 0) return `uid 65534 cannot run node with this checkout's better-sqlite3 (exit ${probe.status}: ${probe.stderr.trim()})`;
  return undefined;
}

/** Lets others read the folder (mkdtemp makes it 0700), as a volume shared with a reader container is. */
export function shareFolder(folder: string): void {
  chmodSync(folder, 0o755);
}

/** Opens the file the way a reader on a read-only mount does, in a process of its own. */
export async function readAsUnprivilegedReader(dbPath: string): Promise<ReaderView> {
  const folder = dirname(dbPath);
  if (isRoot) return run('setpriv', [...NOBODY, process.execPath, READER, dbPath]);
  const modes = readdirSync(folder).map((name) => join(folder, name));
  for (const file of modes) chmodSync(file, 0o444);
  chmodSync(folder, 0o555);
  try {
    return await run(process.execPath, [READER, dbPath]);
  } finally {
    chmodSync(folder, 0o755);
    for (const file of modes) chmodSync(file, 0o644);
  }
}

function run(command: string, args: string[]): Promise<ReaderView> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { encoding: 'utf8', cwd: join(dirname(READER), '..', '..') }, (error, stdout, stderr) => {
      if (error) reject(new Error(`the reader failed: ${error.message}; stderr: ${stderr}`));
      else resolve(JSON.parse(stdout) as ReaderView);
    });
  });
}
