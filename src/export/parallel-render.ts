// `export` of a record format (CSV, JSONL, STIX) on two threads. At a million threats one thread
// spends ~7 s of CPU (cpu-prof: ~3.7 s of it turning SQLite rows into JavaScript values, which is
// better-sqlite3's per-value cost, then escaping, encoding and writing); the 2-core machine has a
// second core. The rows are cut into blocks of BLOCK_ROWS ids: this thread renders the even ones,
// a helper thread (export-helper-thread.ts) the odd ones from its own read-only connection, and
// this thread writes them in order. The helper runs at most HELPER_AHEAD blocks ahead, and each
// block's buffer goes back to it to be filled again, so what waits in memory stays a few
// megabytes whatever the mirror's size.
//
// The helper reads its own snapshot: it checks that the mirror's change_seq there is this one's
// (every change to a current threat moves it), else it stops and this thread renders every block
// itself, as it does for any block the helper could not deliver. The bytes are those the one-thread
// rendering gives (test/export.test.ts compares them).
import { Worker } from 'node:worker_threads';
import type { IdRange, ThreatSnapshot } from './current-threats.js';
import { CSV_HEADER } from './records.js';
import { addBlockCounts, blockBatch, type BlockCounts, type BlockFormat, renderBlock } from './row-blocks.js';
import { STIX_HEAD, stixTail } from './stix.js';

/** Rows a block: ~800 KB of JSONL. */
const BLOCK_ROWS = 2_000;
/**
 * The helper's heap: it holds one block's rows at a time. A second isolate with the process's
 * 48 MB cap grew toward it between collections (peak RSS 163 MB at 1M JSONL, against ~100 MB on
 * one thread); capped at HELPER_HEAP it stays within ~NN MB.
 */
const HELPER_HEAP = { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 };
/** Blocks the helper renders before this thread has taken the first of them. */
const HELPER_AHEAD = 2;

export interface HelperJob {
  readonly dbPath: string;
  readonly organization: string | undefined;
  readonly format: BlockFormat;
  /** The snapshot's change_seq: the helper's must be the same. */
  readonly changeSeq: number;
  /** The helper's blocks, in order. */
  readonly ranges: readonly IdRange[];
  readonly ahead: number;
}

/** To the helper: a block's buffer, back for reuse once its bytes are written. */
export interface ToHelper {
  readonly recycled: ArrayBuffer;
}

/** From the helper thread. */
export type FromHelper =
  | { readonly kind: 'block'; readonly index: number; readonly bytes: Uint8Array; readonly counts: BlockCounts }
  | { readonly kind: 'unusable'; readonly message: string };

/**
 * Every row of the snapshot in `format`, rendered on two threads; `counts` is filled as it goes.
 * The bytes yielded are reused once the consumer asks for the next chunk: it copies them first.
 */
export async function* renderOnTwoThreads(dbPath: string, snapshot: ThreatSnapshot, format: BlockFormat, organization: string | undefined, counts: BlockCounts): AsyncGenerator<string | Uint8Array> {
  const ends = snapshot.blockEnds(BLOCK_ROWS);
  const ranges: IdRange[] = ends.map((through, index) => ({ after: ends[index - 1], through }));
  if (format === 'csv') yield CSV_HEADER;
  if (format === 'stix') yield STIX_HEAD;
  const helper = ranges.length < 2 ? undefined : new Helper({ dbPath, organization, format, changeSeq: snapshot.changeSeq, ranges: ranges.filter((_, index) => index % 2 === 1), ahead: HELPER_AHEAD });
  const batch = blockBatch();
  let firstIndicator = format === 'stix';
  try {
    for (const [index, range] of ranges.entries()) {
      const delivered = index % 2 === 1 ? await helper?.take((index - 1) / 2) : undefined;
      if (delivered !== undefined) addBlockCounts(counts, delivered.counts);
      let block = delivered?.bytes ?? renderBlock(snapshot, format, range, counts, batch);
      // The bundle's first indicator has no comma before it.
      if (firstIndicator && block.length > 0) {
        block = block.subarray(1);
        firstIndicator = false;
      }
      yield block;
      if (delivered !== undefined) helper?.recycle(delivered.bytes);
    }
  } finally {
    helper?.close();
  }
  if (format === 'stix') yield stixTail(counts);
}

/** The helper thread, seen from here: its blocks by index, or undefined once it can deliver no more. */
class Helper {
  readonly #worker: Worker;
  readonly #blocks = new Map<number, Extract<FromHelper, { kind: 'block' }>>();
  #waiting: (() => void) | undefined;
  #gone = false;

  constructor(job: HelperJob) {
    this.#worker = new Worker(new URL('./export-helper-thread.js', import.meta.url), { workerData: job, resourceLimits: HELPER_HEAP });
    this.#worker.on('message', (message: FromHelper) => {
      if (message.kind === 'block') this.#blocks.set(message.index, message);
      else this.#gone = true;
      this.#wake();
    });
    const gone = (): void => {
      this.#gone = true;
      this.#wake();
    };
    this.#worker.on('error', gone);
    this.#worker.on('exit', gone);
  }

  async take(index: number): Promise<{ bytes: Buffer; counts: BlockCounts } | undefined> {
    for (;;) {
      const block = this.#blocks.get(index);
      if (block !== undefined) {
        this.#blocks.delete(index);
        return { bytes: Buffer.from(block.bytes.buffer, block.bytes.byteOffset, block.bytes.byteLength), counts: block.counts };
      }
      if (this.#gone) return undefined;
      await new Promise<void>((resolve) => {
        this.#waiting = resolve;
      });
    }
  }

  /** Hands a block's buffer back (its bytes are written): the helper renders into it again. */
  recycle(bytes: Buffer): void {
    if (this.#gone) return;
    const recycled = bytes.buffer as ArrayBuffer;
    this.#worker.postMessage({ recycled } satisfies ToHelper, [recycled]);
  }

  close(): void {
    this.#gone = true;
    void this.#worker.terminate();
  }

  #wake(): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.();
  }
}
