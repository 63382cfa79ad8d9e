// `stix`: a STIX 2.1 bundle of indicators (OpenCTI, MISP and TAXII servers import it). URL and
// PAGE threats give `[url:value = '…']` (or `[domain-name:value = '…']` for a bare domain), EMAIL
// threats `[email-addr:value = '…']`; other kinds have no STIX Cyber-observable pattern here and
// are counted and left out.
//
// Ids are UUIDv5 in a namespace of our own (the STIX spec forbids its SCO namespace for SDOs), over
// the threat id: the same threat keeps its id in every export, and a changed threat is a new
// version of the same object (same id, later `modified`).
import { createHash } from 'node:crypto';
import type { CurrentThreat } from './current-threats.js';
import { hostBlockOf } from './host-block.js';
import { blockableHost } from './blockable-host.js';

/** uuidv5(DNS namespace, "stix.threat-mirror.invalid"): fixed, documented, not STIX's SCO namespace. */
export const STIX_NAMESPACE = uuidV5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'stix.threat-mirror.invalid');
const NAME_LENGTH = 200;

export interface StixCounts {
  indicators: number;
  /** Threats without a pattern, by type (a URL/PAGE that is neither a URL nor a domain counts under its type). */
  leftOut: Record<string, number>;
}

export function* renderStix(threats: Iterable<CurrentThreat>, counts: StixCounts): Generator<string> {
  const digest = createHash('sha256');
  yield '{"type":"bundle","objects":[';
  for (const threat of threats) {
    const pattern = patternOf(threat);
    // A row stored before blockedAt was normalized may hold an instant RFC 3339 cannot carry.
    const validFrom = stixTimestamp(threat.blockedAt);
    if (pattern === undefined || validFrom === undefined) {
      const why = pattern === undefined ? threat.type : OUT_OF_RANGE;
      counts.leftOut[why] = (counts.leftOut[why] ?? 0) + 1;
      continue;
    }
    const indicator = JSON.stringify(indicatorOf(threat, pattern, validFrom));
    digest.update(indicator);
    yield `${counts.indicators === 0 ? '\n' : ',\n'}${indicator}`;
    counts.indicators += 1;
  }
  // The bundle's id comes last (JSON members are unordered): derived from the objects written,
  // so two exports of the same mirror are the same bytes and different contents get different ids.
  yield `\n],"id":"bundle--${uuidV5(STIX_NAMESPACE, `bundle:${digest.digest('hex')}`)}"}\n`;
}

function indicatorOf(threat: CurrentThreat, pattern: string, validFrom: string): Record<string, unknown> {
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

function patternOf(threat: CurrentThreat): string | undefined {
  if (threat.type === 'EMAIL') return threat.email === null ? undefined : `[email-addr:value = ${stixString(threat.email)}]`;
  if (threat.type !== 'URL' && threat.type !== 'PAGE') return undefined;
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(threat.content)) return `[url:value = ${stixString(threat.content)}]`;
  const block = hostBlockOf(threat.content);
  if (block.kind !== 'host') return undefined;
  const host = blockableHost(block.host);
  return typeof host === 'string' ? `[domain-name:value = ${stixString(host)}]` : undefined;
}

/** A STIX patterning string literal: quote and backslash escaped, nothing else (the grammar's StringLiteral). */
export function stixString(value: string): string {
  return `'${value.replace(/[\\']/g, (character) => `\\${character}`)}'`;
}

/** Counted under this instead of a type: the threat's blockedAt has no RFC 3339 form. */
const OUT_OF_RANGE = 'blockedAt outside 0001-9999';

/**
 * RFC 3339 in UTC with milliseconds, as STIX requires; undefined for an instant outside years
 * 0001-9999, which toISOString writes as "+010000-…" (importers reject the whole bundle).
 */
function stixTimestamp(iso: string): string | undefined {
  const date = new Date(iso);
  const year = date.getUTCFullYear();
  return Number.isNaN(year) || year < 1 || year > 9999 ? undefined : date.toISOString();
}

/** RFC 9562 UUID version 5 (SHA-1, name-based). */
export function uuidV5(namespace: string, name: string): string {
  const bytes = createHash('sha1')
    .update(Buffer.from(namespace.replace(/-/g, ''), 'hex'))
    .update(name, 'utf8')
    .digest()
    .subarray(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x50;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
