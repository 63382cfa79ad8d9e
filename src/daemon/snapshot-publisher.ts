// The daemon's snapshot publishing (THREAT_MIRROR_SNAPSHOT): after a run that changed something,
// or when none exists yet, a new snapshot replaces the old one at that path, never partially.
import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import { writeSnapshotOffThread } from '../db/snapshot.js';
import { errorMessage } from '../lib/errors.js';

export interface PublishSnapshotOptions {
  readonly dbPath: string;
  readonly snapshotPath: string;
  readonly changed: boolean;
  readonly clock: () => Date;
  readonly logger: Logger;
}

/** Never throws: a failed snapshot is logged and the previous one stays in place. */
export async function publishSnapshot({ dbPath, snapshotPath, changed, clock, logger }: PublishSnapshotOptions): Promise<void> {
  if (!changed && existsSync(snapshotPath)) return;
  const started = performance.now();
  try {
    const manifest = await writeSnapshotOffThread(dbPath, snapshotPath, clock().toISOString());
    logger.info({ path: snapshotPath, bytes: manifest.bytes, sha256: manifest.sha256, maxChangeSeq: manifest.maxChangeSeq, ms: Math.round(performance.now() - started) }, 'snapshot published');
  } catch (error) {
    logger.error({ path: snapshotPath }, `snapshot not published, the previous one stays: ${errorMessage(error)}`);
  }
}
