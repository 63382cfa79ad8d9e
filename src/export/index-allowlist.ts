// The export index's side of THREAT_MIRROR_ALLOWLIST (export-index.ts): how it reads a threat with
// what the allowlist matches on, which kind of entry a threat gets, and what a new version of the
// list changes: the threats whose allowedness flipped (read again like changed threats) and the
// zone's passthru names.
import type { Allowlist } from '../allowlist/allowlist-entries.js';
import { AllowMatcher } from '../allowlist/allow-matcher.js';
import type { Database } from '../db/sqlite.js';
import { allowedHostsOf, type HostEntry, hostEntryOf, HOST_TYPES } from './host-selection.js';
import { ALLOWED_KIND, HOST_KIND, OTHER_TYPE_KIND } from './index-view.js';

/** "Blocked now by some organization", on the threat aliased t. */
export const CURRENT = 'EXISTS (SELECT 1 FROM organization_threats o WHERE o.threat_id = t.id AND o.removed_at IS NULL)';
/** A threat as the index reads it: id, type, content, whether current, then what the allowlist matches on. */
export const THREAT_COLUMNS = `t.id, t.type, t.content, ${CURRENT}, t.url_expression, t.address, t.address_namespace, t.address_chain, t.email`;
/**
 * The same for a build without an allowlist: the content of host types only, nothing for the
 * allowlist (reading only what the host formats need was a good part of the build's time at 1M).
 */
const HOST_COLUMNS = `t.id, t.type, CASE WHEN t.type IN (${[...HOST_TYPES].map((type) => `'${type}'`).join(', ')}) THEN t.content END, ${CURRENT}, NULL, NULL, NULL, NULL, NULL`;
export type ThreatRow = [id: number, type: string, content: string | null, current: number, urlExpression: string | null, address: string | null, addressNamespace: string | null, addressChain: string | null, email: string | null];

/** The columns a build reads: the allowlist's only when it has entries. */
export function threatColumns(matcher: AllowMatcher | undefined): string {
  return matcher !== undefined && matcher.size > 0 ? THREAT_COLUMNS : HOST_COLUMNS;
}

/** The allowlist a refresh works with: its version (null: none configured) and its matcher. */
export interface IndexAllowlist {
  readonly version: string | null;
  readonly matcher: AllowMatcher | undefined;
}

export function indexAllowlistOf(list: Allowlist | undefined): IndexAllowlist {
  return list === undefined ? { version: null, matcher: undefined } : { version: list.version, matcher: new AllowMatcher(list.entries) };
}

/** The kind and host a current threat gives the index: allowed, or its host entry (host-selection.ts). */
export function indexEntryOf(row: ThreatRow, matcher: AllowMatcher | undefined): { kind: string; host: string | null } {
  const [, type, text, , urlExpression, address, addressNamespace, addressChain, email] = row;
  const content = text ?? '';
  if (matcher !== undefined && matcher.size > 0 && matcher.threat({ content, urlExpression, address, addressNamespace, addressChain, email }) !== undefined) {
    return { kind: ALLOWED_KIND, host: null };
  }
  const entry = hostEntryOf(type, content);
  return { kind: kindOf(entry), host: entry.kind === 'host' ? entry.host : null };
}

function kindOf(entry: HostEntry): string {
  return entry.kind === 'host' ? HOST_KIND : entry.kind === 'other-type' ? OTHER_TYPE_KIND : entry.reason;
}

/**
 * The threats whose allowedness the new list changes: those it allows now that the index does not
 * hold as allowed, and those the index holds as allowed that it no longer allows. Every current
 * threat is read once (~1 s a million); nothing is read when neither list allows anything.
 */
export async function threatsAllowednessChanged(mirror: Database, index: Database, matcher: AllowMatcher | undefined, pause: () => Promise<void>): Promise<number[]> {
  const before = new Set(index.prepare(`SELECT id FROM threat_entries WHERE kind = '${ALLOWED_KIND}'`).pluck().all() as number[]);
  const changed: number[] = [];
  if (matcher !== undefined && matcher.size > 0) {
    const rows = mirror.prepare(`SELECT ${THREAT_COLUMNS} FROM threats t WHERE ${CURRENT}`).raw().iterate() as IterableIterator<ThreatRow>;
    let read = 0;
    for (const row of rows) {
      if (++read % 5_000 === 0) await pause();
      const allowed = indexEntryOf(row, matcher).kind === ALLOWED_KIND;
      if (allowed !== before.delete(row[0])) changed.push(row[0]);
    }
  }
  // Those left were allowed before and are not now (or are no longer current: read again, they leave the index).
  return [...changed, ...before];
}

/** The zone's passthru names under the new list, and how they differ from the index's. */
export function passthruChange(index: Database, matcher: AllowMatcher | undefined): { added: string[]; removed: string[]; notListed: number } {
  const wanted = matcher === undefined ? { passthru: [] as readonly string[], notListed: 0 } : allowedHostsOf(matcher, 0);
  const now = new Set(index.prepare('SELECT host FROM passthru').pluck().all() as string[]);
  const added = wanted.passthru.filter((host) => !now.delete(host));
  return { added, removed: [...now], notListed: wanted.notListed };
}
