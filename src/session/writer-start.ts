// The first steps of every writing command, taken as early as the command line allows (cli.ts):
// the writer lock, a file restored from THREAT_MIRROR_RESTORE_FROM when there is none
// (replica-restore.ts), then the writer thread, which opens and migrates the file while the main
// thread is still loading the sync's modules. openWriterSession (writer-session.ts) goes on from here.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Config } from '../config.js';
import { WriterClient } from '../db/writer/writer-client.js';
import { acquireWriterLock } from '../db/writer-lock.js';
import type { Releaser } from '../lib/release-all.js';
import { assertWritable, unwritableFolderError } from '../db/writable-path.js';
import { type RestoreOutcome, restoreIfMissing } from './replica-restore.js';

export interface StartedWriter {
  readonly writer: WriterClient;
  /** What was acquired, to be released last-first: the lock, then the writer thread. */
  readonly releasers: Releaser[];
  /** What THREAT_MIRROR_RESTORE_FROM did, when the file was missing; undefined otherwise. */
  readonly restore?: RestoreOutcome | undefined;
}

/** A start that failed: reported once the command has its log (withWriter). */
export interface FailedWriterStart {
  readonly error: unknown;
}

/** Resolves once the writer thread is started (or the start failed); the command's modules load meanwhile. */
export type WriterStart = Promise<StartedWriter | FailedWriterStart>;

/** Takes the writer lock before touching the file, so a second writer never restores, migrates or writes. */
export async function startWriter(config: Pick<Config, 'dbPath' | 'maxResponseBytes' | 'checkpoints' | 'replica'>, now: string): WriterStart {
  try {
    try {
      mkdirSync(dirname(resolve(config.dbPath)), { recursive: true });
    } catch (error) {
      throw unwritableFolderError(config.dbPath, error) ?? error;
    }
    assertWritable(config.dbPath);
    const lock = acquireWriterLock(config.dbPath);
    try {
      const restore = config.replica === undefined ? undefined : await restoreIfMissing(config.dbPath, config.replica);
      const writer = new WriterClient({ dbPath: config.dbPath, maxPageBytes: config.maxResponseBytes, autoCheckpoint: config.checkpoints === 'auto', now });
      return { writer, releasers: [() => lock.release(), () => writer.close()], restore };
    } catch (error) {
      lock.release();
      throw error;
    }
  } catch (error) {
    return { error };
  }
}
