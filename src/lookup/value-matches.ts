// The matches of one looked-up value as ThreatLookup finds them: listed up to a limit, each marked
// when THREAT_MIRROR_ALLOWLIST allows it, and whether any of them blocks. With an allowlist, rows
// are read past the limit until one that blocks is seen, so that `blocked` stays exact.
import type { AllowEntry } from '../allowlist/allowlist-entries.js';
import type { AllowMatcher, ThreatFacts } from '../allowlist/allow-matcher.js';

/** How a threat matched: its exact content, one of the URL's expressions (which), its address, its e-mail. */
export type LookupMatchKind = { readonly by: 'exact' } | { readonly by: 'expression'; readonly expression: string } | { readonly by: 'address' } | { readonly by: 'email' };

export interface LookupMatch {
  readonly id: number;
  readonly content: string;
  readonly type: string;
  readonly organizations: readonly string[];
  readonly match: LookupMatchKind;
  /** Present (true) when THREAT_MIRROR_ALLOWLIST allows it: it blocks nothing here. */
  readonly allowed?: true;
  /** The allowlist's entry that allows it: the value itself, or this threat. */
  readonly allowed_by?: AllowedBy;
}

/** An allowlist entry as an answer names it. */
export interface AllowedBy {
  readonly entry: string;
  readonly kind: AllowEntry['kind'];
  readonly line: number;
  readonly reason: string | null;
}

/** A threat as the lookup reads it. */
export interface MatchedRow {
  id: number;
  content: string;
  type: string;
  url_expression: string | null;
  address: string | null;
  address_namespace: string | null;
  address_chain: string | null;
  email: string | null;
  organizations: string;
}

export class ValueMatches {
  readonly listed = new Map<number, LookupMatch>();
  /** Rows were found beyond those listed. */
  more = false;
  /** A match the allowlist does not allow was found. */
  blocking = false;
  readonly #limit: number;
  readonly #allowlist: AllowMatcher | undefined;
  /** The entry that covers the value itself: every match is allowed by it. */
  readonly #byValue: AllowEntry | undefined;

  constructor(value: string, limit: number, allowlist: AllowMatcher | undefined) {
    this.#limit = limit;
    this.#allowlist = allowlist === undefined || allowlist.size === 0 ? undefined : allowlist;
    this.#byValue = this.#allowlist?.value(value);
  }

  /** Whether reading more rows can change the answer: the list is full, and `blocked` is known. */
  get done(): boolean {
    return this.listed.size >= this.#limit && (this.#allowlist === undefined || this.blocking || this.#byValue !== undefined);
  }

  has(id: number): boolean {
    return this.listed.has(id);
  }

  add(row: MatchedRow, match: (row: MatchedRow) => LookupMatchKind): void {
    if (this.listed.has(row.id)) return;
    const allowedBy = this.#byValue ?? this.#allowlist?.threat(factsOf(row));
    if (allowedBy === undefined) this.blocking = true;
    if (this.listed.size >= this.#limit) {
      this.more = true;
      return;
    }
    const listed: LookupMatch = { id: row.id, content: row.content, type: row.type, organizations: organizationsOf(row), match: match(row) };
    this.listed.set(row.id, allowedBy === undefined ? listed : { ...listed, allowed: true, allowed_by: namedEntry(allowedBy) });
  }
}

export function organizationsOf(row: Pick<MatchedRow, 'organizations'>): string[] {
  return row.organizations.split('\u001f').sort();
}

function factsOf(row: MatchedRow): ThreatFacts {
  return { content: row.content, urlExpression: row.url_expression, address: row.address, addressNamespace: row.address_namespace, addressChain: row.address_chain, email: row.email };
}

export function namedEntry(entry: AllowEntry): AllowedBy {
  return { entry: entry.value, kind: entry.kind, line: entry.line, reason: entry.reason };
}
