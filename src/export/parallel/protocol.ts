// The messages of the `export` command's helper thread (export-helper-thread.ts; its client:
// helper-client.ts): the job it starts with (its workerData), the buffers handed back to it, and
// what it posts: each block's bytes and counts, or why it can deliver no more.
import type { AllowEntry } from '../../allowlist/allowlist-entries.js';
import type { IdRange } from '../current-threats.js';
import type { BlockCounts, BlockKind } from './row-blocks.js';

export interface HelperJob {
  readonly dbPath: string;
  readonly organization: string | undefined;
  readonly kind: BlockKind;
  /** THREAT_MIRROR_ALLOWLIST's entries as this thread's snapshot has them, and the ids it allows there: the helper leaves out the same threats. */
  readonly allowlist: readonly AllowEntry[] | undefined;
  readonly allowedIds: readonly number[];
  /** The snapshot's change_seq: the helper's must be the same. */
  readonly changeSeq: number;
  /** The helper's blocks, in order. */
  readonly ranges: readonly IdRange[];
  readonly ahead: number;
}

/** To the helper: a block's buffer, back for reuse once its bytes are used. */
export interface ToHelper {
  readonly recycled: ArrayBuffer;
}

/** From the helper thread. */
export type FromHelper =
  | { readonly kind: 'block'; readonly index: number; readonly bytes: Uint8Array; readonly counts: BlockCounts }
  | { readonly kind: 'unusable'; readonly message: string };
