// A new pod starts from a replica (THREAT_MIRROR_RESTORE_FROM; docs/readers-and-replicas.md): a
// writer that finds no database file asks Litestream, the engine that wrote the replica, to
// restore it (its format is Litestream's own: never read here), checks what came back, and only
// then puts it in the database's place, before the writer thread opens the path. Run under the
// writer lock, so two processes never restore into one path.
import { spawn } from 'node:child_process';
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ReplicaConfig } from '../config/replica.js';
import { restoringFilesOf, restoringPathOf, sqliteSidecarsOf } from '../db/database-files.js';
import { forgetPrimaryFeed, restoredFileProblem } from '../db/writer/restored-file.js';

export type RestoreOutcome =
  | { readonly restored: true; readonly from: string; readonly bytes: number; readonly ms: number }
  | { readonly restored: false; readonly from: string; readonly reason: string };

/** The restore failed, or what it restored cannot be used: the start stops (exit 1) rather than walk the whole history again unseen. */
export class RestoreError extends Error {
  override readonly name = 'RestoreError';
}

/** This program's variables (keys, token, paths): none is Litestream's. */
const OWN_VARIABLES = 'THREAT_MIRROR_';

/** Keeps the last lines of what Litestream printed, for the message of a failed restore. */
const OUTPUT_KEPT_CHARS = 2_000;
/** How long a restore stopped by a signal has to end after SIGTERM before it is killed (SIGKILL). */
const STOP_GRACE_MS = 2_000;
/** What stops a restore: a pod stopped, Ctrl-C, the terminal closed. */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/**
 * Restores `dbPath` from the replica when the file does not exist; undefined when it does (the
 * file is never replaced). No replica yet: the outcome says so, and the writer starts empty.
 */
export async function restoreIfMissing(configuredPath: string, replica: ReplicaConfig): Promise<RestoreOutcome | undefined> {
  // One spelling for every path below: leftovers are named absolute (database-files.ts).
  const dbPath = resolve(configuredPath);
  if (existsSync(dbPath)) return undefined;
  const started = Date.now();
  const restoring = restoringPathOf(dbPath);
  // A WAL or shared memory left without its database would be read into the restored file; a
  // copy left by a start killed before its rename would make Litestream refuse to restore.
  const removeLeftovers = (): void => {
    for (const leftover of [...sqliteSidecarsOf(dbPath), ...restoringFilesOf(dbPath).filter((path) => path !== restoring)]) rmSync(leftover, { force: true });
  };
  removeLeftovers();
  rmSync(restoring, { force: true });
  let output: string;
  try {
    output = await runLitestream(replica, restoring);
  } catch (error) {
    // Stopped or failed half-way: nothing of it stays (the next start would remove it anyway).
    removeLeftovers();
    rmSync(restoring, { force: true });
    throw error;
  }
  if (!existsSync(restoring)) return { restored: false, from: replica.url, reason: lastLine(output) || 'no backup found' };
  let problem: string | undefined;
  try {
    problem = restoredFileProblem(restoring);
    if (problem === undefined) forgetPrimaryFeed(restoring);
  } catch (error) {
    problem = `it cannot be opened: ${error instanceof Error ? error.message : String(error)}`;
  }
  // The check's connections leave the WAL and WAL index beside the copy, Litestream its own.
  removeLeftovers();
  if (problem !== undefined) {
    rmSync(restoring, { force: true });
    throw new RestoreError(`${replica.variable}: the copy restored from ${replica.url} cannot be used: ${problem}`);
  }
  const bytes = statSync(restoring).size;
  renameSync(restoring, dbPath);
  return { restored: true, from: replica.url, bytes, ms: Date.now() - started };
}

/**
 * `litestream restore -if-replica-exists -o OUT URL` (or `-config FILE DB`): exit 0 with no OUT
 * when the replica holds no backup yet. The environment passes through but for this program's own
 * variables: the object store's credentials (AWS_ACCESS_KEY_ID, LITESTREAM_ACCESS_KEY_ID, ...) are
 * Litestream's to read, the service's API keys and the HTTP token are not. SIGTERM or SIGINT stops
 * it: a restore from a slow or hanging object store may take minutes, and a pod being stopped must
 * not wait for it (nor leave it running, writing beside the next start's). It runs in a process
 * group of its own, so that a wrapper named by THREAT_MIRROR_LITESTREAM is stopped with what it
 * started, and is killed if it outlives STOP_GRACE_MS.
 */
function runLitestream(replica: ReplicaConfig, out: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEPT_CHARS);
    };
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith(OWN_VARIABLES)));
    const child = spawn(replica.litestream, ['restore', '-if-replica-exists', '-o', out, ...replica.source], { stdio: ['ignore', 'pipe', 'pipe'], env, detached: true });
    let stoppedBy: NodeJS.Signals | undefined;
    const signalGroup = (signal: NodeJS.Signals): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        // The group is gone already.
      }
    };
    let killer: NodeJS.Timeout | undefined;
    const stop = (signal: NodeJS.Signals): void => {
      stoppedBy ??= signal;
      signalGroup('SIGTERM');
      killer ??= setTimeout(() => signalGroup('SIGKILL'), STOP_GRACE_MS);
    };
    // Its own session, so the terminal's signals no longer reach it: they are passed on here, and
    // an exit of this process by any other way (a second signal: lib/signals.ts) kills it first.
    const killGroup = (): void => signalGroup('SIGKILL');
    for (const signal of STOP_SIGNALS) process.on(signal, stop);
    process.on('exit', killGroup);
    let settled = false;
    const settle = (outcome: () => void): void => {
      for (const signal of STOP_SIGNALS) process.off(signal, stop);
      process.off('exit', killGroup);
      clearTimeout(killer);
      if (!settled) outcome();
      settled = true;
    };
    const stopped = (): void => reject(new RestoreError(`${replica.variable}: the restore from ${replica.url} was stopped by ${stoppedBy}; the next start restores again`));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (error) => settle(() => reject(new RestoreError(`${replica.variable}: cannot run ${replica.litestream} (THREAT_MIRROR_LITESTREAM): ${error.message}`))));
    // A stopped restore ends when its process does, not when every pipe closes (a process it
    // started may hold them); what is left of its group is killed with it.
    child.on('exit', () => {
      if (stoppedBy === undefined) return;
      signalGroup('SIGKILL');
      settle(stopped);
    });
    child.on('close', (code, signal) => {
      if (stoppedBy !== undefined) settle(stopped);
      else if (code === 0) settle(() => resolve(output));
      else settle(() => reject(new RestoreError(`${replica.variable}: litestream restore from ${replica.url} failed (${signal ?? `exit ${code}`}): ${lastLine(output)}`)));
    });
  });
}

function lastLine(output: string): string {
  return output.trim().split('\n').at(-1)?.trim() ?? '';
}
