// The snapshot's thread (see writeSnapshotOffThread): VACUUM INTO, fsync and hashing run here.
import { parentPort, workerData } from 'node:worker_threads';
import { writeSnapshot } from './snapshot-copy.js';
import { releaseUnreachable } from './sqlite.js';

const { dbPath, snapshotPath, createdAt } = workerData as { dbPath: string; snapshotPath: string; createdAt: string };
try {
  parentPort?.postMessage({ manifest: writeSnapshot(dbPath, snapshotPath, createdAt) });
} catch (error) {
  parentPort?.postMessage({ error: (error as Error).message });
}
setImmediate(releaseUnreachable); // what the copy prepared, freed before the thread ends (sqlite.ts)
