// `jsonl`: every current threat with its organizations and lookup columns, by id, one JSON object
// a line, keyed by the CSV's columns (csv.ts). Values are exact, as in the CSV.
import type { CurrentThreat } from '../current-threats.js';
import type { COLUMNS, RecordCounts } from './csv.js';

/** The row as an object keyed by column: what a JSONL line is the JSON.stringify of (see jsonlLine). */
export function valuesOf(threat: CurrentThreat): Record<(typeof COLUMNS)[number], string | number | null | readonly string[]> {
  return {
    id: threat.id,
    type: threat.type,
    content: threat.content,
    blocked_at: threat.blockedAt,
    organizations: threat.organizations,
    first_seen_at: threat.firstSeenAt,
    updated_at: threat.updatedAt,
    change_seq: threat.changeSeq,
    host: threat.host,
    registrable_domain: threat.registrableDomain,
    address_namespace: threat.addressNamespace,
    address_chain: threat.addressChain,
    address: threat.address,
    email: threat.email,
    email_domain: threat.emailDomain,
  };
}

/** One JSON object a line; organizations as an array. */
export function* renderJsonl(threats: Iterable<CurrentThreat>, counts: RecordCounts): Generator<string> {
  for (const threat of threats) {
    yield jsonlLine(threat);
    counts.records += 1;
  }
}

/**
 * `JSON.stringify(valuesOf(threat))` and a newline, written out: stringifying only the strings cut
 * a 1M-threat export's rendering from ~1.5 to ~0.6 s (docs/performance.md). The unit tests hold
 * the two to the same bytes.
 */
export function jsonlLine(t: CurrentThreat): string {
  return `{"id":${t.id},"type":${json(t.type)},"content":${json(t.content)},"blocked_at":${json(t.blockedAt)},"organizations":${JSON.stringify(t.organizations)},"first_seen_at":${json(t.firstSeenAt)},"updated_at":${json(t.updatedAt)},"change_seq":${t.changeSeq},"host":${json(t.host)},"registrable_domain":${json(t.registrableDomain)},"address_namespace":${json(t.addressNamespace)},"address_chain":${json(t.addressChain)},"address":${json(t.address)},"email":${json(t.email)},"email_domain":${json(t.emailDomain)}}\n`;
}

function json(value: string | null): string {
  return value === null ? 'null' : JSON.stringify(value);
}
