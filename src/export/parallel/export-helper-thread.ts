// The helper thread of a parallel export (its client: helper-client.ts; its messages: protocol.ts):
// renders its blocks of rows from a snapshot of its own, in order, and hands each over as bytes
// (transferred, not copied), never more than `ahead` blocks before their buffers come back to be
// filled again.
import { parentPort, workerData } from 'node:worker_threads';
import { openReadOnly } from '../../db/open-database.js';
import { releaseUnreachable } from '../../db/sqlite.js';
import { matcherFor } from '../../allowlist/allow-matcher.js';
import { ThreatSnapshot } from '../current-threats.js';
import type { FromHelper, HelperJob, ToHelper } from './protocol.js';
import { blockBatch, noBlockCounts, renderBlock } from './row-blocks.js';

const port = parentPort;
if (port) void help(workerData as HelperJob, port).then(() => setImmediate(releaseUnreachable)); // sqlite.ts

async function help(job: HelperJob, port: NonNullable<typeof parentPort>): Promise<void> {
  const post = (message: FromHelper, transfer: ArrayBuffer[] = []): void => port.postMessage(message, transfer);
  /** Buffers handed back, to be filled again; each one out is a block not written yet. */
  const free: ArrayBuffer[] = [];
  let out = 0;
  let wake: (() => void) | undefined;
  const onRecycled = ({ recycled }: ToHelper): void => {
    free.push(recycled);
    out -= 1;
    wake?.();
  };
  port.on('message', onRecycled);
  const sqlite = openReadOnly(job.dbPath, { busyTimeoutMs: 5000, smallPageCache: true });
  try {
    const snapshot = new ThreatSnapshot(sqlite, job.organization, matcherFor(job.allowlist), job.allowedIds);
    if (snapshot.changeSeq !== job.changeSeq) {
      post({ kind: 'unusable', message: `the mirror moved on (change_seq ${snapshot.changeSeq}, not ${job.changeSeq})` });
      return;
    }
    const batch = blockBatch();
    for (const [index, range] of job.ranges.entries()) {
      while (out >= job.ahead) await new Promise<void>((resolve) => (wake = resolve));
      const counts = noBlockCounts();
      const rendered = renderBlock(snapshot, job.kind, range, counts, batch);
      const bytes = new Uint8Array(fitting(free, rendered.length), 0, rendered.length);
      bytes.set(rendered);
      post({ kind: 'block', index, bytes, counts }, [bytes.buffer as ArrayBuffer]);
      out += 1;
    }
    snapshot.close();
  } catch (error) {
    post({ kind: 'unusable', message: error instanceof Error ? error.message : String(error) });
  } finally {
    sqlite.close(); // a reader never checkpoints
    port.off('message', onRecycled);
  }
}

/** A free buffer of at least `length` bytes (one too small is dropped), or a new one. */
function fitting(free: ArrayBuffer[], length: number): ArrayBuffer {
  for (let buffer = free.pop(); buffer !== undefined; buffer = free.pop()) if (buffer.byteLength >= length) return buffer;
  return new ArrayBuffer(Math.max(length, 1024 * 1024));
}
