// `csv`: every current threat with its organizations and lookup columns, by id, one row each
// (RFC 4180). Values are exact: a cell is never rewritten (no spreadsheet formula guard), see
// docs/exports.md. The columns are `jsonl`'s keys too (jsonl.ts).
import type { CurrentThreat } from '../current-threats.js';

export const COLUMNS = [
  'id', 'type', 'content', 'blocked_at', 'organizations', 'first_seen_at', 'updated_at', 'change_seq',
  'host', 'registrable_domain', 'address_namespace', 'address_chain', 'address', 'email', 'email_domain',
] as const;

export interface RecordCounts {
  records: number;
}

export const CSV_HEADER = `${COLUMNS.join(',')}\r\n`;

/** RFC 4180: CRLF line ends, a header row, fields quoted when they hold a comma, quote, CR or LF. */
export function* renderCsv(threats: Iterable<CurrentThreat>, counts: RecordCounts): Generator<string> {
  yield CSV_HEADER;
  yield* csvRows(threats, counts);
}

/** The rows of a CSV without its header. */
export function* csvRows(threats: Iterable<CurrentThreat>, counts: RecordCounts): Generator<string> {
  for (const t of threats) {
    yield `${t.id},${csv(t.type)},${csv(t.content)},${csv(t.blockedAt)},${csv(t.organizations.join(';'))},${csv(t.firstSeenAt)},${csv(t.updatedAt)},${t.changeSeq},${csv(t.host)},${csv(t.registrableDomain)},${csv(t.addressNamespace)},${csv(t.addressChain)},${csv(t.address)},${csv(t.email)},${csv(t.emailDomain)}\r\n`;
    counts.records += 1;
  }
}

const NEEDS_QUOTES = /[",\r\n]/;

function csv(value: string | null): string {
  if (value === null) return '';
  return NEEDS_QUOTES.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}
