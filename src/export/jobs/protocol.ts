// The messages of an export job's thread (export-job-thread.ts; its client: export-job-client.ts),
// on the model of the writer's (db/writer/protocol.ts): the job it starts with (its workerData),
// and what it posts back: its log lines and metrics as it goes, then its result or why it failed.
import type { Allowlist } from '../../allowlist/allowlist-entries.js';
import type { TempFile } from '../atomic-file.js';
import type { ExportTarget, RefresherState } from './export-refresher.js';
import type { IndexChange } from '../index/export-index.js';
import type { ExportFormat } from '../../config/export-formats.js';
import type { IndexState } from '../index/schema.js';
import type { ZoneTimers } from '../../lib/rpz-zone.js';

export interface RefreshJob {
  readonly kind: 'refresh';
  readonly dbPath: string;
  /** The export index's file; undefined: no index is kept (no DNS, no host-format file). */
  readonly indexPath: string | undefined;
  /** Build the index anew from the mirror (at start, or after a refresh that failed) rather than from the change feed. */
  readonly rebuild: boolean;
  /** At start: files are left as they are and the zone takes the serial of the rpz file (ExportRefresher.adoptZoneSerial). */
  readonly atStart: boolean;
  readonly targets: readonly ExportTarget[];
  readonly timers: ZoneTimers;
  /** What the last refresh knew of the files (undefined at start). */
  readonly refresher: RefresherState | undefined;
  /** THREAT_MIRROR_ALLOWLIST as the main thread last read it; undefined: none configured. */
  readonly allowlist: Allowlist | undefined;
  /** The daemon's clock when the job was asked for (epoch ms): a changed zone's serial is the time (nextZoneSerial). */
  readonly nowMs: number;
}

export interface RefreshResult {
  readonly change: IndexChange | undefined;
  /** The index as the job left it, and how many hosts it lists. */
  readonly index: { readonly state: IndexState; readonly hosts: number } | undefined;
  readonly refresher: RefresherState | undefined;
}

export interface FeedJob {
  readonly kind: 'feed';
  readonly dbPath: string;
  /** Host formats of every organization are read from the index (the zone's version); others from the mirror. */
  readonly indexPath: string | undefined;
  readonly format: ExportFormat;
  readonly organization: string | undefined;
  /** The feed's file: the job writes a temporary file beside it and leaves the rename to the caller. */
  readonly path: string;
  readonly timers: ZoneTimers;
  /** THREAT_MIRROR_ALLOWLIST as the serving thread has it (the index follows the main thread's). */
  readonly allowlist: Allowlist | undefined;
}

export type ExportJob = RefreshJob | FeedJob;
export type ResultOf<J extends ExportJob> = J extends RefreshJob ? RefreshResult : TempFile;

/** A log line or a metric from the job, for the thread that started it. */
export type JobEvent =
  | { readonly kind: 'log'; readonly level: 'debug' | 'info' | 'warn' | 'error'; readonly fields: Record<string, unknown>; readonly msg: string }
  | { readonly kind: 'export-checked'; readonly format: ExportFormat; readonly path: string; readonly entries: number; readonly lastWriteMs: number }
  | { readonly kind: 'export-failed'; readonly format: ExportFormat; readonly path: string };

export type FromJobThread = JobEvent | { readonly kind: 'done'; readonly result: unknown } | { readonly kind: 'failed'; readonly message: string; readonly stack?: string | undefined };
