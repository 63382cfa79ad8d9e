// The daemon's snapshot publishing (THREAT_MIRROR_SNAPSHOT): after a run that changed something,
// or when none exists yet, a new snapshot replaces the old one at that path, never partially.
import { existsSync, statSync } from 'node:fs';
import type { Logger } from 'pino';
import { writeSnapshotOffThread } from '../db/snapshot-copy.js';
import { errorMessage } from '../lib/errors.js';

/** What publishing reports for /metrics (threat_mirror_snapshot_*): implemented by MirrorMetrics. */
export interface SnapshotObserver {
  /** Published, at start by an earlier process or now: its file's mtime, Unix ms. */
  snapshotPublished(atMs: number): void;
  snapshotFailed(): void;
}

export interface PublishSnapshotOptions {
  readonly dbPath: string;
  readonly snapshotPath: string;
  readonly changed: boolean;
  readonly clock: () => Date;
  readonly logger: Logger;
  readonly observer: SnapshotObserver;
}

/** Never throws: a failed snapshot is logged and counted, and the previous one stays in place. */
export async function publishSnapshot({ dbPath, snapshotPath, changed, clock, logger, observer }: PublishSnapshotOptions): Promise<void> {
  if (!changed && existsSync(snapshotPath)) return;
  const started = performance.now();
  try {
    const manifest = await writeSnapshotOffThread(dbPath, snapshotPath, clock().toISOString());
    observeExistingSnapshot(snapshotPath, observer);
    logger.info({ path: snapshotPath, bytes: manifest.bytes, sha256: manifest.sha256, maxChangeSeq: manifest.maxChangeSeq, ms: Math.round(performance.now() - started) }, 'snapshot published');
  } catch (error) {
    observer.snapshotFailed();
    logger.error({ path: snapshotPath }, `snapshot not published, the previous one stays: ${errorMessage(error)}`);
  }
}

/** The snapshot at the path, if there is one, as published at its mtime (at start: an earlier process's). */
export function observeExistingSnapshot(snapshotPath: string, observer: SnapshotObserver): void {
  try {
    observer.snapshotPublished(statSync(snapshotPath).mtimeMs);
  } catch {
    // none yet: the gauge appears with the first publish
  }
}
