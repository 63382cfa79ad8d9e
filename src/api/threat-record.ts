// Run-time check of one ThreatResult; what fails is kept aside with the reason, never thrown.
import { isDay } from '../lib/days.js';
import { redact } from '../lib/redact.js';
import type { Threat } from '../records.js';

export type ThreatCheck = { readonly ok: true; readonly threat: Threat } | { readonly ok: false; readonly reason: string };

export const DOCUMENTED_ASSET_TYPES: ReadonlySet<string> = new Set([
  'URL', 'PAGE', 'ADDRESS', 'EMAIL', 'IPFS',
  ...Array.from({ length: 35 }, (_, index) => `PLATFORM_${String(index + 1).padStart(2, '0')}`),
]);

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]([01]\d|2[0-3]):?[0-5]\d)$/;

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
  if (typeof type !== 'string' || type === '') return { ok: false, reason: `type must be a non-empty string, got ${describe(type)}` };
  // Date.parse alone accepts 2024-02-30 (it rolls over to March), so the day is checked on its own.
  if (typeof blockedAt !== 'string' || !ISO_TIMESTAMP.test(blockedAt) || !isDay(blockedAt.slice(0, 10))) {
    return { ok: false, reason: `blockedAt must be an ISO 8601 timestamp, got ${describe(blockedAt)}` };
  }
  return { ok: true, threat: { id, content, type, blockedAt } };
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  // Redacted before it is cut, so no part of a secret survives the cut.
  const text = redact(JSON.stringify(value) ?? String(value));
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
