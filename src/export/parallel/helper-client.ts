// A mirror's rows read and worked on by two threads, for the `export` command (the helper
// thread's client; its messages: protocol.ts): at a million threats one thread spends most of an
// export turning SQLite rows into JavaScript values and working on each (cpu-prof: ~3.7 s of a
// JSONL export's ~7 s in better-sqlite3's per-value cost; the sqlite3 shell takes ~3 s to print
// the same rows), and the 2-core machine has a second core. The rows are cut into blocks of
// BLOCK_ROWS ids: this thread does the even ones, a helper thread (export-helper-thread.ts) the
// odd ones from its own read-only connection, and their results are taken in order. The helper
// runs at most HELPER_AHEAD blocks ahead, and each block's buffer goes back to it to be filled
// again, so what waits in memory stays a few megabytes whatever the size.
//
// The helper reads its own snapshot: it checks that the mirror's change_seq there is this one's
// (every change to a current threat moves it), else it stops, and this thread does every block
// the helper did not deliver itself.
import { Worker } from 'node:worker_threads';
import type { IdRange, ThreatSnapshot } from '../current-threats.js';
import type { BlockCounts } from './row-blocks.js';
import type { FromHelper, HelperJob, ToHelper } from './protocol.js';

/** Rows a block: ~800 KB of JSONL. */
const BLOCK_ROWS = 2_000;
/** The helper's heap: it holds one block's rows at a time. */
const HELPER_HEAP = { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 };
/** Blocks the helper renders before this thread has taken the first of them. */
const HELPER_AHEAD = 2;

/** One block's result: done here (`local`), or the helper's bytes and counts. */
export type BlockResult = { readonly local: true } | { readonly local: false; readonly bytes: Buffer; readonly counts: BlockCounts };

/**
 * Every block of the snapshot's rows in order; this thread's are done by `local` when their turn
 * comes. A helper block's bytes are the consumer's until it asks for the next block.
 */
export async function* blocksOnTwoThreads(
  job: Pick<HelperJob, 'dbPath' | 'organization' | 'kind' | 'allowlist' | 'allowedIds'>,
  snapshot: ThreatSnapshot,
  local: (range: IdRange) => void,
): AsyncGenerator<BlockResult> {
  const ends = snapshot.blockEnds(BLOCK_ROWS);
  const ranges: IdRange[] = ends.map((through, index) => ({ after: ends[index - 1], through }));
  const helper = ranges.length < 2 ? undefined : new Helper({ ...job, changeSeq: snapshot.changeSeq, ranges: ranges.filter((_, index) => index % 2 === 1), ahead: HELPER_AHEAD });
  try {
    for (const [index, range] of ranges.entries()) {
      const delivered = index % 2 === 1 ? await helper?.take((index - 1) / 2) : undefined;
      if (delivered === undefined) {
        local(range);
        yield { local: true };
        continue;
      }
      yield { local: false, ...delivered };
      helper?.recycle(delivered.bytes);
    }
  } finally {
    helper?.close();
  }
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

  /** Hands a block's buffer back (its bytes are used): the helper fills it again. */
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
