// Run-time check of one ThreatResult; what fails is kept aside with the reason, never thrown.
import { isDay } from '../lib/days.js';
import { redact } from '../lib/redact.js';
import type { Threat } from '../records.js';

export { DOCUMENTED_ASSET_TYPES } from '../records.js';

export type ThreatCheck = { readonly ok: true; readonly threat: Threat } | { readonly ok: false; readonly reason: string };

/**
 * Types outside the documented list are stored as they come, but as what they are: short tokens
 * (the longest documented is 11 characters). A 60 KB or multi-line "type" is a broken record.
 */
export const MAX_TYPE_LENGTH = 64;
const ASSET_TYPE_TEXT = new RegExp(`^[\\x20-\\x7e]{1,${MAX_TYPE_LENGTH}}$`);

/** The interface's own form: UTC, millisecond precision. Most records are in it already. */
const CANONICAL_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;
/** ISO 8601 as services write it: seconds and fractions optional, Z or an offset. */
const ISO_TIMESTAMP = /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.(\d{1,9}))?)?(?:Z|([+-])([01]\d|2[0-3]):?([0-5]\d))$/;

// Hand-written rather than a schema library: this runs once per record on the hot path, and
// four field checks with exact reasons are clearer here than a generic error tree.
export function checkThreat(raw: unknown): ThreatCheck {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, reason: 'record is not a JSON object' };
  }
  const record = raw as Record<string, unknown>;
  const { id, content, type, blockedAt } = record;
  if (typeof id === 'number' && Number.isInteger(id) && !Number.isSafeInteger(id)) {
    // Parsed, it has already lost digits: the reason says why, the raw text keeps the digits.
    return { ok: false, reason: 'id is not a safe integer (beyond 2^53 - 1, so it cannot be stored exactly); see raw for the digits as sent' };
  }
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) {
    return { ok: false, reason: `id must be a positive integer, got ${describe(id)}` };
  }
  if (typeof content !== 'string') return { ok: false, reason: `content must be a string, got ${describe(content)}` };
  // Stored as UTF-8, a lone surrogate would become bytes no reader decodes as what was sent.
  if (!isWellFormed(content)) return { ok: false, reason: NOT_WELL_FORMED('content') };
  if (typeof type !== 'string' || !ASSET_TYPE_TEXT.test(type)) {
    return { ok: false, reason: `type must be 1 to ${MAX_TYPE_LENGTH} printable ASCII characters, got ${describe(type)}` };
  }
  if (typeof blockedAt !== 'string') return { ok: false, reason: `blockedAt must be an ISO 8601 timestamp, got ${describe(blockedAt)}` };
  const instant = utcInstantOf(blockedAt);
  if (typeof instant !== 'string') return { ok: false, reason: `blockedAt ${instant.problem}, got ${describe(blockedAt)}` };
  return { ok: true, threat: { id, content, type, blockedAt: instant } };
}

/**
 * The timestamp as its UTC instant in the interface's form, YYYY-MM-DDTHH:MM:SS.sssZ, or why it
 * cannot be one. Everything after validation (the day a threat is filed under, the ledger's
 * digests, removals, exports) compares these strings: an offset such as +05:00 kept as sent would
 * file 2026-11-21T01:00:00+05:00 (20:00 UTC the day before) under the wrong day, and a later walk
 * of that day would mark a live threat removed. Digits past the millisecond are cut, not rounded,
 * so the instant never moves into the next day.
 */
export function utcInstantOf(text: string): string | { readonly problem: string } {
  // Date.parse alone accepts 2024-02-30 (it rolls over to March), so the day is checked on its own.
  if (CANONICAL_TIMESTAMP.test(text) && isDay(text.slice(0, 10)) && !text.startsWith('0000')) return text;
  const parts = ISO_TIMESTAMP.exec(text);
  if (parts === null || !isDay(parts[1] as string)) return NOT_A_TIMESTAMP;
  const [, day, hours, minutes, seconds = '0', fraction = '', sign, offsetHours = '0', offsetMinutes = '0'] = parts as unknown as string[];
  const offsetMs = (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes)) * 60_000;
  const local = new Date(`${day}T00:00:00.000Z`).getTime() + ((Number(hours) * 60 + Number(minutes)) * 60 + Number(seconds)) * 1000 + Number(fraction.padEnd(3, '0').slice(0, 3));
  const utc = new Date(local - offsetMs);
  const year = utc.getUTCFullYear();
  if (year < 1 || year > 9999) return { problem: 'falls outside the years 0001-9999 once in UTC (RFC 3339 and STIX cannot carry it)' };
  return utc.toISOString();
}

const NOT_A_TIMESTAMP = { problem: 'must be an ISO 8601 timestamp' } as const;

/**
 * Whether a string is well-formed UTF-16: no lone surrogate (`\ud800` is valid JSON). SQLite
 * stores text as UTF-8, and a lone surrogate becomes bytes (ED A0 80) that strict readers refuse
 * (Python's sqlite3 fails on the whole query) and exports write as three U+FFFD: such a record is
 * rejected, kept in rejected_records as the JSON text received, never stored as something else.
 */
export function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

export const NOT_WELL_FORMED = (field: string): string =>
  `${field} is not well-formed Unicode (it holds a lone surrogate, such as \\ud800): it cannot be stored as sent; see raw for the JSON text received`;

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  // Redacted before it is cut, so no part of a secret survives the cut.
  const text = redact(JSON.stringify(value) ?? String(value));
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
