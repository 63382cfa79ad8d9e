// What the `export` command does on two threads (helper-client.ts): render CSV, JSONL and STIX in
// blocks, and select the host formats' hosts in blocks. The bytes and the host lists are those the
// one-thread code gives (test/export-parallel.test.ts compares them).
import type { ThreatSnapshot } from '../current-threats.js';
import { allowedHostsOf, type HostSelection, noneLeftOut } from '../host-selection.js';
import { HostSet } from '../host-set.js';
import { CSV_HEADER } from '../formats/csv.js';
import { addBlockCounts, blockBatch, type BlockCounts, type RecordFormat, noBlockCounts, renderBlock, selectBlock } from './row-blocks.js';
import { STIX_HEAD, stixTail } from '../formats/stix.js';
import { blocksOnTwoThreads } from './helper-client.js';

/**
 * Every row of the snapshot in `format`, rendered on two threads; `counts` is filled as it goes.
 * The bytes yielded are reused once the consumer asks for the next chunk: it copies them first.
 */
export async function* renderOnTwoThreads(dbPath: string, snapshot: ThreatSnapshot, format: RecordFormat, organization: string | undefined, counts: BlockCounts): AsyncGenerator<string | Uint8Array> {
  if (format === 'csv') yield CSV_HEADER;
  if (format === 'stix') yield STIX_HEAD;
  const batch = blockBatch();
  let firstIndicator = format === 'stix';
  for await (const block of blocksOnTwoThreads({ dbPath, organization, kind: format, allowlist: snapshot.allowlist?.entries, allowedIds: snapshot.allowedIds }, snapshot, (range) => renderBlock(snapshot, format, range, counts, batch))) {
    if (!block.local) addBlockCounts(counts, block.counts);
    let bytes = block.local ? batch.bytes() : block.bytes;
    // The bundle's first indicator has no comma before it.
    if (firstIndicator && bytes.length > 0) {
      bytes = bytes.subarray(1);
      firstIndicator = false;
    }
    yield bytes;
  }
  if (format === 'stix') yield stixTail(counts);
}

/** The host formats' selection, the rows read and judged on two threads (the helper sends its hosts a line each). */
export async function selectHostsOnTwoThreads(dbPath: string, snapshot: ThreatSnapshot, organization: string | undefined): Promise<HostSelection> {
  const hosts = new HostSet();
  const counts = noBlockCounts();
  try {
    for await (const block of blocksOnTwoThreads({ dbPath, organization, kind: 'hosts', allowlist: snapshot.allowlist?.entries, allowedIds: snapshot.allowedIds }, snapshot, (range) => selectBlock(snapshot, range, counts, (host) => hosts.add(host)))) {
      if (block.local) continue;
      addBlockCounts(counts, block.counts);
      // Host names are ASCII (blockable-host.ts): one byte a character.
      if (block.bytes.length > 0) for (const host of block.bytes.toString('latin1').split('\n')) hosts.add(host);
    }
  } catch (error) {
    hosts.close();
    throw error;
  }
  const leftOut = noneLeftOut();
  for (const [reason, count] of Object.entries(counts.leftOut)) leftOut[reason as keyof typeof leftOut] = count;
  const allowlist = snapshot.allowlist === undefined ? undefined : allowedHostsOf(snapshot.allowlist, counts.allowed);
  return { hosts, hostCount: hosts.size, hostThreats: counts.hostThreats, leftOut, otherTypes: counts.otherTypes, allowlist };
}
