// The day digest (src/db/content-hash.ts) is stored in the ledger and compared by `verify` across
// versions: it must stay the sum of each record's SHA-1 as first defined, whatever computes it.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addToDigest, digestHex, emptyDigest } from '../../src/db/content-hash.js';

/** The digest as the first ledger wrote it: createHash per record, two big-endian words summed. */
function referenceDigest(records: ReadonlyArray<[number, string, string, string]>): string {
  let high = 0;
  let low = 0;
  for (const [id, content, type, blockedAt] of records) {
    const sha1 = createHash('sha1').update(`${id}\u0000${type}\u0000${blockedAt}\u0000${content}`).digest();
    high = (high + sha1.readUInt32BE(0)) >>> 0;
    low = (low + sha1.readUInt32BE(4)) >>> 0;
  }
  return high.toString(16).padStart(8, '0') + low.toString(16).padStart(8, '0');
}

describe('day digest', () => {
  it('equals the first definition, is order-independent, and counts records', () => {
    const records: Array<[number, string, string, string]> = Array.from({ length: 500 }, (_, index) => [
      index * 7919 + 1,
      index % 3 === 0 ? `https://phish-${index}.example/login?ü=${index}` : `eip155:1:0x${index.toString(16).padStart(40, '0')}`,
      index % 3 === 0 ? 'URL' : 'ADDRESS',
      `2026-03-${String((index % 28) + 1).padStart(2, '0')}T10:00:00Z`,
    ]);
    const forward = emptyDigest();
    for (const [id, content, type, blockedAt] of records) addToDigest(forward, id, content, type, blockedAt);
    const backward = emptyDigest();
    for (const [id, content, type, blockedAt] of [...records].reverse()) addToDigest(backward, id, content, type, blockedAt);
    expect(digestHex(forward)).toBe(referenceDigest(records));
    expect(digestHex(backward)).toBe(digestHex(forward));
    expect(forward.records).toBe(500);
    expect(digestHex(emptyDigest())).toBe('0000000000000000');
  });
});
