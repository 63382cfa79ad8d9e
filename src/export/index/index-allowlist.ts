// The export index's side of THREAT_MIRROR_ALLOWLIST (export-index.ts): how it reads a threat with
// what the allowlist matches on, which kind of entry a threat gets, and what a new version of the
// list changes: the threats whose allowedness flipped (read again like changed threats) and the
// zone's passthru names.
import type { Allowlist } from '../../allowlist/allowlist-entries.js';
import { type AllowMatcher, matcherFor } from '../../allowlist/allow-matcher.js';
import { inForce } from '../../db/read/in-force.js';
import type { Database } from '../../db/sqlite.js';
import { allowedThreatIds } from '../allowed-threats.js';
import { allowedHostsOf, type HostEntry, hostEntryOf } from '../host-selection.js';
import { ALLOWED_KIND, HOST_KIND, OTHER_TYPE_KIND } from './schema.js';

/** "In force for some organization", on the threat aliased t. */
export const CURRENT = inForce('t');
/** A threat as the index reads it: id, type, content, whether current, what the allowlist matches on, what it gives the host formats. */
export const THREAT_COLUMNS = `t.id, t.type, t.content, ${CURRENT}, t.url_expression, t.address, t.address_namespace, t.address_chain, t.email, t.export_host, t.export_left_out`;
/**
 * What a build reads of every current threat: what it gives the host formats only (reading only
 * what they need was a good part of the build's time at 1M); what the allowlist allows is found
 * apart (allowed-threats.ts).
 */
export const HOST_COLUMNS = `t.id, t.type, NULL, ${CURRENT}, NULL, NULL, NULL, NULL, NULL, t.export_host, t.export_left_out`;
export type ThreatRow = [
  id: number, type: string, content: string | null, current: number, urlExpression: string | null, address: string | null, addressNamespace: string | null,
  addressChain: string | null, email: string | null, exportHost: string | null, exportLeftOut: string | null,
];

/** The allowlist a refresh works with: its version (null: none configured) and its matcher. */
export interface IndexAllowlist {
  readonly version: string | null;
  readonly matcher: AllowMatcher | undefined;
}

export function indexAllowlistOf(list: Allowlist | undefined): IndexAllowlist {
  return { version: list?.version ?? null, matcher: matcherFor(list?.entries) };
}

/** Whether the list allows a threat read with THREAT_COLUMNS. */
export function allowsRow(matcher: AllowMatcher | undefined, row: ThreatRow): boolean {
  if (matcher === undefined || matcher.size === 0) return false;
  const [, , content, , urlExpression, address, addressNamespace, addressChain, email] = row;
  return matcher.threat({ content: content ?? '', urlExpression, address, addressNamespace, addressChain, email }) !== undefined;
}

/** The kind and host a current threat gives the index: allowed, or its host entry (host-selection.ts). */
export function indexEntryOf(row: ThreatRow, allowed: boolean): { kind: string; host: string | null } {
  if (allowed) return { kind: ALLOWED_KIND, host: null };
  const entry = hostEntryOf({ type: row[1], exportHost: row[9], exportLeftOut: row[10] });
  return { kind: kindOf(entry), host: entry.kind === 'host' ? entry.host : null };
}

function kindOf(entry: HostEntry): string {
  return entry.kind === 'host' ? HOST_KIND : entry.kind === 'other-type' ? OTHER_TYPE_KIND : entry.reason;
}

/**
 * The threats whose allowedness the new list changes: those it allows now that the index does not
 * hold as allowed, and those the index holds as allowed that it no longer allows (found through the
 * mirror's indexes: allowed-threats.ts).
 */
export function threatsAllowednessChanged(mirror: Database, index: Database, matcher: AllowMatcher | undefined): number[] {
  const before = new Set(index.prepare(`SELECT id FROM threat_entries WHERE kind = '${ALLOWED_KIND}'`).pluck().all() as number[]);
  const now = matcher === undefined ? new Set<number>() : allowedThreatIds(mirror, matcher);
  const current = mirror.prepare(`SELECT ${CURRENT} FROM threats t WHERE t.id = ?`).pluck();
  const changed = [...now].filter((id) => !before.delete(id) && current.get(id) === 1);
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
