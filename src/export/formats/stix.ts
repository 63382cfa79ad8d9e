// `stix`: a STIX 2.1 bundle of indicators (OpenCTI, MISP and TAXII servers import it). URL and
// PAGE threats give `[url:value = '…']` (or `[domain-name:value = '…']` for a bare domain), EMAIL
// threats `[email-addr:value = '…']`; other kinds have no STIX Cyber-observable pattern here and
// are counted and left out.
//
// Ids are UUIDv5 in a namespace of our own (the STIX spec forbids its SCO namespace for SDOs), over
// the threat id: the same threat keeps its id in every export, and a changed threat is a new
// version of the same object (same id, later `modified`).
import { createHash, hash } from 'node:crypto';
import type { IndicatorSource } from '../current-threats.js';
import { TYPES_READ_AS } from '../../url/lookup-fields.js';

/** uuidv5(DNS namespace, "stix.threat-mirror.invalid"): fixed, documented, not STIX's SCO namespace. */
export const STIX_NAMESPACE = uuidV5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'stix.threat-mirror.invalid');
const NAME_LENGTH = 200;

export interface StixCounts {
  indicators: number;
  /** Threats without a pattern, by type (a URL/PAGE that is neither a URL nor a domain counts under its type). */
  leftOut: Record<string, number>;
  /** The highest change_seq among the indicators (the bundle's id is derived from it). */
  lastChange: number;
  /** Two sums, modulo 2^32, of a mix of each indicator's threat id (the bundle's id is derived from them too): see addIdToSums. */
  idSums: [number, number];
}

export function noStixCounts(): StixCounts {
  return { indicators: 0, leftOut: {}, lastChange: 0, idSums: [0, 0] };
}

/**
 * Counts an indicator's threat id into `sums`. Sums, so that a bundle rendered in blocks on two
 * threads (parallel-render.ts) adds its blocks' in any order: the same set of ids gives the same
 * sums, another set of the same size and latest change_seq (an allowlist that changed, another
 * pod's allowlist) other sums but for a chance of 2^-64.
 */
export function addIdToSums(sums: [number, number], id: number): void {
  const low = id >>> 0;
  const high = Math.floor(id / 2 ** 32) >>> 0;
  sums[0] = (sums[0] + mix32(low ^ mix32(high ^ 0x9e3779b9))) >>> 0;
  sums[1] = (sums[1] + mix32((low + 0x85ebca6b) ^ mix32(high ^ 0xc2b2ae35))) >>> 0;
}

/** Adds a block's sums into `sums`. */
export function addSums(sums: [number, number], block: readonly [number, number]): void {
  sums[0] = (sums[0] + block[0]) >>> 0;
  sums[1] = (sums[1] + block[1]) >>> 0;
}

/** MurmurHash3's 32-bit finalizer: every bit of the input moves every bit of the output. */
function mix32(value: number): number {
  let h = value >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** What a bundle starts with. */
export const STIX_HEAD = '{"type":"bundle","objects":[';

export function* renderStix(threats: Iterable<IndicatorSource>, counts: StixCounts): Generator<string> {
  yield STIX_HEAD;
  let first = true;
  for (const indicator of stixIndicators(threats, counts)) {
    yield first ? indicator.slice(1) : indicator;
    first = false;
  }
  yield stixTail(counts);
}

/**
 * The indicators of these threats, each as `,\n{…}`: the bundle's first one loses its comma (a
 * bundle rendered in blocks, parallel-render.ts, strips it from the first block that has any).
 */
export function* stixIndicators(threats: Iterable<IndicatorSource>, counts: StixCounts): Generator<string> {
  for (const threat of threats) {
    const pattern = patternOf(threat);
    // A row stored before blockedAt was normalized may hold an instant RFC 3339 cannot carry.
    const validFrom = stixTimestamp(threat.blockedAt);
    if (pattern === undefined || validFrom === undefined) {
      const why = pattern === undefined ? threat.type : OUT_OF_RANGE;
      counts.leftOut[why] = (counts.leftOut[why] ?? 0) + 1;
      continue;
    }
    yield `,\n${indicatorJson(threat, pattern, validFrom)}`;
    counts.indicators += 1;
    counts.lastChange = Math.max(counts.lastChange, threat.changeSeq);
    addIdToSums(counts.idSums, threat.id);
  }
}

/**
 * The bundle's end. Its id comes last (JSON members are unordered), so that the file is written
 * in one pass: two exports of the same mirror get the same id, and a different set of indicators a
 * different one. Every indicator that changes takes a change_seq above every earlier one; the sums
 * of its ids tell apart sets that differ by which threats they hold (an allowlist, which moves no
 * change_seq, decides that too): all without hashing 400 MB of JSON (a sha256 of it was 2.3 s of a
 * 1M export).
 */
export function stixTail(counts: StixCounts): string {
  const [first, second] = counts.idSums;
  return `\n],"id":"bundle--${uuidV5(STIX_NAMESPACE, `bundle:${counts.indicators}:${counts.lastChange}:${first.toString(16)}:${second.toString(16)}`)}"}\n`;
}

/**
 * The indicator's JSON, written out with its properties in a fixed order; only the free-text
 * strings go through JSON.stringify (ids, timestamps and fixed words need no escaping). A unit
 * test holds it to JSON.stringify(indicatorOf(...)).
 */
export function indicatorJson(threat: IndicatorSource, pattern: string, validFrom: string): string {
  const name = threat.content.length > NAME_LENGTH ? `${threat.content.slice(0, NAME_LENGTH)}…` : threat.content;
  return `{"type":"indicator","spec_version":"2.1","id":"indicator--${threatIndicatorUuid(threat.id)}","created":"${stixTimestamp(threat.firstSeenAt) ?? validFrom}","modified":"${stixTimestamp(threat.updatedAt) ?? validFrom}","name":${JSON.stringify(name)},"indicator_types":["malicious-activity"],"pattern":${JSON.stringify(pattern)},"pattern_type":"stix","pattern_version":"2.1","valid_from":"${validFrom}","labels":[${JSON.stringify(threat.type.toLowerCase())}],"external_references":[{"source_name":"threat-mirror","external_id":"${threat.id}"}]}`;
}

export function indicatorOf(threat: IndicatorSource, pattern: string, validFrom: string): Record<string, unknown> {
  return {
    type: 'indicator',
    spec_version: '2.1',
    id: `indicator--${uuidV5(STIX_NAMESPACE, `threat:${threat.id}`)}`,
    created: stixTimestamp(threat.firstSeenAt) ?? validFrom,
    modified: stixTimestamp(threat.updatedAt) ?? validFrom,
    name: threat.content.length > NAME_LENGTH ? `${threat.content.slice(0, NAME_LENGTH)}…` : threat.content,
    indicator_types: ['malicious-activity'],
    pattern,
    pattern_type: 'stix',
    pattern_version: '2.1',
    valid_from: validFrom,
    labels: [threat.type.toLowerCase()],
    external_references: [{ source_name: 'threat-mirror', external_id: String(threat.id) }],
  };
}

export function patternOf(threat: IndicatorSource): string | undefined {
  if (TYPES_READ_AS.email.includes(threat.type)) return threat.email === null ? undefined : `[email-addr:value = ${stixString(threat.email)}]`;
  if (!TYPES_READ_AS.url.includes(threat.type)) return undefined;
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(threat.content)) return `[url:value = ${stixString(threat.content)}]`;
  // A bare domain: the host it blocks as a whole, as every host format lists it (its row's export_host).
  return threat.exportHost === null ? undefined : `[domain-name:value = ${stixString(threat.exportHost)}]`;
}

/** A STIX patterning string literal: quote and backslash escaped, nothing else (the grammar's StringLiteral). */
export function stixString(value: string): string {
  return `'${value.replace(/[\\']/g, (character) => `\\${character}`)}'`;
}

/** Counted under this instead of a type: the threat's blockedAt has no RFC 3339 form. */
const OUT_OF_RANGE = 'blockedAt outside 0001-9999';

/** Already RFC 3339 UTC with milliseconds, on a day every month has (the 29th to 31st go through Date). */
const CANONICAL_TIMESTAMP = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

/**
 * RFC 3339 in UTC with milliseconds, as STIX requires; undefined for an instant outside years
 * 0001-9999, which toISOString writes as "+010000-…" (importers reject the whole bundle).
 */
export function stixTimestamp(iso: string): string | undefined {
  // The mirror's own timestamps, and most of the service's, are in this form already: a Date per
  // timestamp was 2.7 s of a 1M export. Year 0000 is the one such form outside the range.
  if (CANONICAL_TIMESTAMP.test(iso) && !iso.startsWith('0000')) return iso;
  const date = new Date(iso);
  const year = date.getUTCFullYear();
  return Number.isNaN(year) || year < 1 || year > 9999 ? undefined : date.toISOString();
}

/** uuidV5(STIX_NAMESPACE, `threat:${id}`), with one reused buffer and a one-shot hash (a Hash object per threat was 2.6 s of a 1M export). */
const threatName = Buffer.alloc(16 + 64);
Buffer.from(STIX_NAMESPACE.replace(/-/g, ''), 'hex').copy(threatName);
const THREAT_PREFIX = 16 + threatName.write('threat:', 16, 'latin1');

export function threatIndicatorUuid(id: number): string {
  const end = THREAT_PREFIX + threatName.write(String(id), THREAT_PREFIX, 'latin1');
  return formatUuidV5(hash('sha1', threatName.subarray(0, end), 'buffer'));
}

/** RFC 9562 UUID version 5 (SHA-1, name-based). */
export function uuidV5(namespace: string, name: string): string {
  return formatUuidV5(createHash('sha1').update(Buffer.from(namespace.replace(/-/g, ''), 'hex')).update(name, 'utf8').digest());
}

function formatUuidV5(sha1: Buffer): string {
  const bytes = sha1.subarray(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x50;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
