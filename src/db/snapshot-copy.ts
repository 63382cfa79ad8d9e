// A consistent, compacted copy of the mirror that opens anywhere, read-only, beside a JSON manifest.
//
// `VACUUM INTO` copies one read transaction's view (whole pages only, like any reader) into a new
// file in rollback (DELETE) journal mode, so it needs no -wal/-shm and opens on a read-only mount.
// It is written to FILE.partial, fsynced, and renamed over FILE: a reader of FILE, or a process
// killed mid-way, never sees a partial copy at that path.
import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { makeFolderFor } from '../lib/make-folder.js';
import { manifestPathFor } from './snapshot-files.js';
import { openReadOnly } from './open-database.js';

export { manifestPathFor } from './snapshot-files.js';

export interface SnapshotManifest {
  /** The snapshot's file name, relative to the manifest. */
  readonly file: string;
  readonly sha256: string;
  readonly bytes: number;
  /** The change feed's position in the snapshot: a reader that saw this much has everything in it. */
  readonly maxChangeSeq: number | null;
  readonly organizations: ReadonlyArray<{ readonly organization: string; readonly completeThrough: string | null }>;
  readonly createdAt: string;
  readonly journalMode: 'delete';
}

/** Writes the snapshot and its manifest; returns the manifest. Synchronous: run it off the main thread in the daemon. */
export function writeSnapshot(dbPath: string, snapshotPath: string, createdAt: string): SnapshotManifest {
  const target = resolve(snapshotPath);
  makeFolderFor(target, dirname(target));
  const partial = `${target}.partial`;
  const manifestPartial = `${manifestPathFor(target)}.partial`;
  // A process killed mid-way leaves these (a link planted there is removed, never followed).
  rmSync(partial, { force: true });
  rmSync(manifestPartial, { force: true });
  try {
    // Created here, exclusively (O_EXCL: never through a link someone put there since), and empty:
    // VACUUM INTO writes into an empty file, and would create one through a dangling link.
    closeSync(openSync(partial, 'wx', 0o644));
    const source = openReadOnly(dbPath, { busyTimeoutMs: 5000 });
    try {
      source.prepare('VACUUM INTO ?').run(partial);
    } finally {
      source.close();
    }
    const copy = openReadOnly(partial, { busyTimeoutMs: 0 });
    let facts: Pick<SnapshotManifest, 'maxChangeSeq' | 'organizations'>;
    try {
      facts = {
        maxChangeSeq: copy.prepare('SELECT max(change_seq) FROM threats').pluck().get() as number | null,
        organizations: copy
          // Those the copy answers for: sync_status leaves out those retired (no longer configured).
          .prepare('SELECT organization, complete_through AS completeThrough FROM sync_status WHERE complete_through IS NOT NULL ORDER BY organization')
          .all() as SnapshotManifest['organizations'],
      };
    } finally {
      copy.close();
    }
    const { sha256, bytes } = fsyncAndHash(partial);
    const manifest: SnapshotManifest = { file: basename(target), sha256, bytes, ...facts, createdAt, journalMode: 'delete' };
    writeFileSync(manifestPartial, `${JSON.stringify(manifest, null, 2)}\n`, { flag: 'wx' });
    fsyncAndHash(manifestPartial);
    // The copy first: a manifest never names a file that is not there yet. A reader that fetches
    // both between the two renames sees a checksum mismatch and tries again.
    renameSync(partial, target);
    renameSync(manifestPartial, manifestPathFor(target));
    fsyncDirectory(dirname(target));
    return manifest;
  } catch (error) {
    rmSync(partial, { force: true });
    rmSync(manifestPartial, { force: true });
    throw error;
  }
}

/** The same, on a thread of its own: the daemon's event loop goes on answering probes meanwhile. */
export function writeSnapshotOffThread(dbPath: string, snapshotPath: string, createdAt: string): Promise<SnapshotManifest> {
  return new Promise((resolvePromise, reject) => {
    const worker = new Worker(new URL('./snapshot-thread.js', import.meta.url), {
      workerData: { dbPath, snapshotPath, createdAt },
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 2 },
    });
    let settled = false;
    worker.once('message', (message: { manifest?: SnapshotManifest; error?: string }) => {
      settled = true;
      if (message.manifest) resolvePromise(message.manifest);
      else reject(new Error(message.error ?? 'the snapshot thread failed'));
    });
    worker.once('error', (error) => {
      settled = true;
      reject(error);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`the snapshot thread exited (code ${code})`));
    });
  });
}

function fsyncAndHash(path: string): { sha256: string; bytes: number } {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(1 << 20);
  const fd = openSync(path, 'r+');
  let bytes = 0;
  try {
    fsyncSync(fd);
    for (let read = readSync(fd, buffer, 0, buffer.length, null); read > 0; read = readSync(fd, buffer, 0, buffer.length, null)) {
      hash.update(buffer.subarray(0, read));
      bytes += read;
    }
  } finally {
    closeSync(fd);
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** Makes the renames durable: a crash after this keeps the new names. */
function fsyncDirectory(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
