// `csv` and `jsonl`: every current threat with its organizations and lookup columns, by id.
// Values are exact: a cell is never rewritten (no spreadsheet formula guard), see docs/exports.md.
import type { CurrentThreat } from './current-threats.js';

const COLUMNS = [
  'id', 'type', 'content', 'blocked_at', 'organizations', 'first_seen_at', 'updated_at', 'change_seq',
  'host', 'registrable_domain', 'address_namespace', 'address_chain', 'address', 'email', 'email_domain',
] as const;

function valuesOf(threat: CurrentThreat): Record<(typeof COLUMNS)[number], string | number | null | readonly string[]> {
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

export interface RecordCounts {
  records: number;
}

/** RFC 4180: CRLF line ends, a header row, fields quoted when they hold a comma, quote, CR or LF. */
export function* renderCsv(threats: Iterable<CurrentThreat>, counts: RecordCounts): Generator<string> {
  yield `${COLUMNS.join(',')}\r\n`;
  for (const threat of threats) {
    const values = valuesOf(threat);
    yield `${COLUMNS.map((column) => csvField(values[column])).join(',')}\r\n`;
    counts.records += 1;
  }
}

/** One JSON object a line; organizations as an array. */
export function* renderJsonl(threats: Iterable<CurrentThreat>, counts: RecordCounts): Generator<string> {
  for (const threat of threats) {
    yield `${JSON.stringify(valuesOf(threat))}\n`;
    counts.records += 1;
  }
}

function csvField(value: string | number | null | readonly string[]): string {
  if (value === null) return '';
  const text = Array.isArray(value) ? value.join(';') : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
