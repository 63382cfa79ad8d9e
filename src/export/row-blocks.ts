// The record formats (CSV, JSONL, STIX) rendered a block of rows at a time: the rows of one id
// range, as UTF-8 bytes, with what they counted. Both threads of a parallel export
// (parallel-render.ts) render blocks with this, each from its own snapshot of the mirror.
import type { IdRange, ThreatSnapshot } from './current-threats.js';
import { csvRows, renderJsonl } from './records.js';
import { stixIndicators } from './stix.js';
import { Utf8Batch } from './utf8-batch.js';

/** A batch for blocks (reused from block to block): 2,000 JSONL rows are ~800 KB. */
export function blockBatch(): Utf8Batch {
  return new Utf8Batch(1024 * 1024);
}

export type BlockFormat = 'csv' | 'jsonl' | 'stix';

export function isBlockFormat(format: string): format is BlockFormat {
  return format === 'csv' || format === 'jsonl' || format === 'stix';
}

/** What blocks count, summed over them: records (CSV, JSONL), or indicators and what STIX left out. */
export interface BlockCounts {
  records: number;
  indicators: number;
  leftOut: Record<string, number>;
  lastChange: number;
}

export function noBlockCounts(): BlockCounts {
  return { records: 0, indicators: 0, leftOut: {}, lastChange: 0 };
}

export function addBlockCounts(sum: BlockCounts, block: Readonly<BlockCounts>): void {
  sum.records += block.records;
  sum.indicators += block.indicators;
  for (const [why, count] of Object.entries(block.leftOut)) sum.leftOut[why] = (sum.leftOut[why] ?? 0) + count;
  sum.lastChange = Math.max(sum.lastChange, block.lastChange);
}

/**
 * The rows of `range`, rendered into `bytes` (a blockBatch(), cleared first); STIX indicators each
 * start with `,\n` (the first of the bundle loses it).
 */
export function renderBlock(snapshot: ThreatSnapshot, format: BlockFormat, range: IdRange, counts: BlockCounts, bytes: Utf8Batch): Buffer {
  bytes.clear();
  let lines: Iterable<string>;
  if (format === 'stix') lines = stixIndicators(snapshot.indicatorSources(range), counts);
  else if (format === 'csv') lines = csvRows(snapshot.threats(range), counts);
  else lines = renderJsonl(snapshot.threats(range), counts);
  for (const line of lines) bytes.add(line);
  return bytes.bytes();
}
