// A block of rows at a time, for the `export` command's two threads (parallel-render.ts): the
// record formats (CSV, JSONL, STIX) rendered as UTF-8 bytes, or the host formats' hosts selected,
// with what the block counted. Both threads work on blocks with this, each from its own snapshot.
import type { IdRange, ThreatSnapshot } from '../current-threats.js';
import { hostEntryOf } from '../host-selection.js';
import { csvRows } from '../formats/csv.js';
import { renderJsonl } from '../formats/jsonl.js';
import { addSums, stixIndicators } from '../formats/stix.js';
import { Utf8Batch } from './utf8-batch.js';

export type RecordFormat = 'csv' | 'jsonl' | 'stix';
/** What a block is made into: a record format's bytes, or hosts (one a line, when sent between threads). */
export type BlockKind = RecordFormat | 'hosts';

export function isRecordFormat(format: string): format is RecordFormat {
  return format === 'csv' || format === 'jsonl' || format === 'stix';
}

/** What blocks count, summed over them: records, STIX indicators, or hosts; leftOut by type (STIX) or by reason (hosts). */
export interface BlockCounts {
  records: number;
  indicators: number;
  leftOut: Record<string, number>;
  lastChange: number;
  /** STIX: the sums of the indicators' ids (stix.ts addIdToSums). */
  idSums: [number, number];
  hostThreats: number;
  otherTypes: number;
  /** Threats THREAT_MIRROR_ALLOWLIST allows: left out of every format. */
  allowed: number;
}

export function noBlockCounts(): BlockCounts {
  return { records: 0, indicators: 0, leftOut: {}, lastChange: 0, idSums: [0, 0], hostThreats: 0, otherTypes: 0, allowed: 0 };
}

export function addBlockCounts(sum: BlockCounts, block: Readonly<BlockCounts>): void {
  sum.records += block.records;
  sum.indicators += block.indicators;
  for (const [why, count] of Object.entries(block.leftOut)) sum.leftOut[why] = (sum.leftOut[why] ?? 0) + count;
  sum.lastChange = Math.max(sum.lastChange, block.lastChange);
  addSums(sum.idSums, block.idSums);
  sum.hostThreats += block.hostThreats;
  sum.otherTypes += block.otherTypes;
  sum.allowed += block.allowed;
}

/** A batch for blocks (reused from block to block): 2,000 JSONL rows are ~800 KB. */
export function blockBatch(): Utf8Batch {
  return new Utf8Batch(1024 * 1024);
}

/**
 * The block of `range` made into bytes in `bytes` (a blockBatch(), cleared first): a record
 * format's rows (STIX indicators each start with `,\n`; the first of the bundle loses it), or
 * hosts one a line.
 */
export function renderBlock(snapshot: ThreatSnapshot, kind: BlockKind, range: IdRange, counts: BlockCounts, bytes: Utf8Batch): Buffer {
  bytes.clear();
  if (kind === 'hosts') {
    let first = true;
    selectBlock(snapshot, range, counts, (host) => {
      bytes.add(first ? host : `\n${host}`);
      first = false;
    });
    return bytes.bytes();
  }
  let lines: Iterable<string>;
  if (kind === 'stix') lines = stixIndicators(snapshot.indicatorSources(range, counts), counts);
  else if (kind === 'csv') lines = csvRows(snapshot.threats(range, counts), counts);
  else lines = renderJsonl(snapshot.threats(range, counts), counts);
  for (const line of lines) bytes.add(line);
  return bytes.bytes();
}

/** The host formats' selection of the current threats in `range`: each host blocked as a whole to `add`, the rest counted. */
export function selectBlock(snapshot: ThreatSnapshot, range: IdRange, counts: BlockCounts, add: (host: string) => void): void {
  for (const source of snapshot.hostSources(range, counts)) {
    const entry = hostEntryOf(source);
    if (entry.kind === 'other-type') counts.otherTypes += 1;
    else if (entry.kind === 'left-out') counts.leftOut[entry.reason] = (counts.leftOut[entry.reason] ?? 0) + 1;
    else {
      add(entry.host);
      counts.hostThreats += 1;
    }
  }
}
