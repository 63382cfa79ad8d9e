// An order-independent digest of a day's threats: the ledger and `verify` compare days with it.
import { hash } from 'node:crypto';

export interface DayDigest {
  records: number;
  /** Two 32-bit sums of per-record hashes: adding is order-independent, and cheap. */
  high: number;
  low: number;
}

export function emptyDigest(): DayDigest {
  return { records: 0, high: 0, low: 0 };
}

export function addToDigest(digest: DayDigest, id: number, content: string, type: string, blockedAt: string): void {
  // One-shot and hex: ~3× faster than createHash().update().digest() per row (measured, 200,000
  // rows, Node 20), and each completed window hashes all its rows.
  const hex = hash('sha1', `${id}\u0000${type}\u0000${blockedAt}\u0000${content}`, 'hex');
  digest.records += 1;
  digest.high = (digest.high + Number.parseInt(hex.slice(0, 8), 16)) >>> 0;
  digest.low = (digest.low + Number.parseInt(hex.slice(8, 16), 16)) >>> 0;
}

export function digestHex(digest: DayDigest): string {
  return digest.high.toString(16).padStart(8, '0') + digest.low.toString(16).padStart(8, '0');
}

/** A threat as the digest sees it. */
export interface DigestedThreat {
  readonly id: number;
  readonly content: string;
  readonly type: string;
  readonly blockedAt: string;
}

/** Adds a threat to the digest of its day (UTC, from blocked_at), starting that day's digest if new. */
export function addToDayDigests(digests: Map<string, DayDigest>, threat: DigestedThreat): void {
  const day = threat.blockedAt.slice(0, 10);
  let digest = digests.get(day);
  if (!digest) digests.set(day, (digest = emptyDigest()));
  addToDigest(digest, threat.id, threat.content, threat.type, threat.blockedAt);
}
