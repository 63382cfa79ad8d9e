// "Is this blocked?" for every kind of value, shared by `threat-mirror lookup` and GET/POST /v1/lookup.
// URLs and bare domains match by Safe Browsing expressions (src/url/), addresses and e-mails by
// their derived columns, anything else by exact content. Every match is an index search, and only
// threats in force for some organization count (the view in_force: db/read/in-force.ts).
import type Database from 'better-sqlite3';
import { inForce, inForceOrganizations } from '../db/read/in-force.js';
import { coveringExpressions } from '../url/expressions.js';
import { TYPES_READ_AS } from '../url/lookup-fields.js';
import { parseAddress, parseEmail } from '../url/value-kinds.js';
import { readWebUrl } from '../url/web-url.js';
import type { AllowMatcher } from '../allowlist/allow-matcher.js';
import { type AllowedBy, type LookupMatch, type LookupMatchKind, type MatchedRow, organizationsOf, ValueMatches } from './value-matches.js';

// What a match is lives with the code that builds it; the answers' readers import it from here.
export type { AllowedBy, LookupMatch, LookupMatchKind } from './value-matches.js';

export interface LookupResult {
  readonly value: string;
  /** True when any threat matches that the allowlist does not allow, whether or not `matches` lists it. */
  readonly blocked: boolean;
  /** Present (true) when threats match but the allowlist allows every one of them. */
  readonly allowed?: true;
  /** Exact matches first, then by id; at most MAX_MATCHES_PER_VALUE, and fewer once the answer is large. */
  readonly matches: readonly LookupMatch[];
  /** Present (true) when the mirror holds matches that `matches` does not list. */
  readonly matches_truncated?: true;
  /** Only when asked for: URL and PAGE threats on the URL's host that do not cover it. Context, never a match. */
  readonly same_host?: ReadonlyArray<Omit<LookupMatch, 'match'>>;
  readonly same_host_truncated?: true;
}

/** The matching's answer; the verdicts and the mirror's state are added above it (verdict.ts). */
export interface LookupDocument {
  readonly results: readonly LookupResult[];
}

export interface LookupOptions {
  readonly organization?: string | undefined;
  readonly sameHost?: boolean;
  /** Matches (and same-host threats) to list at most; 0 still answers `blocked`. Default MAX_MATCHES_PER_VALUE. */
  readonly listAtMost?: number;
  /** THREAT_MIRROR_ALLOWLIST as it is now: what it allows matches, but blocks nothing. */
  readonly allowlist?: AllowMatcher | undefined;
}

const LOOKUP_MMAP_BYTES = 256 * 1024 * 1024;
/** Values per request at most (the endpoint's and the CLI's limit). */
export const MAX_LOOKUP_VALUES = 1000;
/**
 * Matches listed per value at most. One URL can match hundreds of threats (the same page reported
 * again and again); an answer listing them all for each of 1,000 values ran the HTTP thread's
 * heap out and took the daemon down. `blocked` stays exact; SQL lists everything.
 */
export const MAX_MATCHES_PER_VALUE = 100;
/**
 * Characters of listed content per answer at most (matches and same-host threats of all its
 * values together): what a 32 MB heap holds with the answer's JSON beside it. Values after the
 * budget is spent are still answered `blocked` or not, with their matches left out.
 */
export const MAX_LISTED_CONTENT_CHARS = 2_000_000;

type Row = MatchedRow;

/** Prepared once per connection; the connection may be read-only. */
export class ThreatLookup {
  readonly #exactIds: Database.Statement;
  readonly #expressionIds: (expressions: number) => Database.Statement;
  readonly #expressionStatements = new Map<number, Database.Statement>();
  readonly #listedRow: Database.Statement;
  readonly #byAddress: Database.Statement;
  readonly #byEmail: Database.Statement;
  readonly #byHost: Database.Statement;

  constructor(sqlite: Database.Database) {
    // A URL lookup probes the expression index ~10-40 times at random: read through a memory map
    // instead of a read() per page missing from the 2 MB page cache. Per connection, no writes.
    sqlite.pragma(`mmap_size = ${LOOKUP_MMAP_BYTES}`);
    // Only threats blocked for some organization (or the one asked about) count. The organizations
    // are gathered per row rather than grouped over a join. Rows come into the heap one by one only
    // as far as they are listed (firstRows); SQLite sorts every match in its own memory. No LIMIT:
    // on the benchmark's 1M-threat file it made a lookup that finds nothing take 48-93 µs instead
    // of 15-21 (SQLite opens a temporary table for it).
    const asked = '(@organization IS NULL OR f.organization = @organization)';
    const select = (where: string): Database.Statement =>
      sqlite.prepare(
        `SELECT t.id, t.content, t.type, t.url_expression, t.address, t.address_namespace, t.address_chain, t.email,
                ${inForceOrganizations('t', 'char(31)', asked)} AS organizations
           FROM threats t
          WHERE (${where}) AND ${inForce('t', asked)}
          ORDER BY t.id`,
      );
    // Exact content and expressions go by id first, read from the indexes alone (each holds the
    // rowid), and each id is then checked and read one by one only as far as it is listed. A URL
    // with 870 matches took 3.6 ms a lookup in one statement (each matching row read and its links
    // checked before the sort) and 0.9 ms so (benchmark's 1M file).
    this.#exactIds = sqlite.prepare('SELECT id FROM threats WHERE content = @value ORDER BY id').pluck();
    // Prepared per number of expressions (bounded by coveringExpressions): a bound list costs less
    // than json_each's parse.
    this.#expressionIds = (count: number): Database.Statement => {
      let statement = this.#expressionStatements.get(count);
      if (statement === undefined) {
        const list = Array.from({ length: count }, (_, index) => `@e${index}`).join(', ');
        statement = sqlite.prepare(`SELECT id FROM threats WHERE url_expression IN (${list}) ORDER BY id`).pluck();
        this.#expressionStatements.set(count, statement);
      }
      return statement;
    };
    this.#listedRow = select('t.id = @id');
    this.#byAddress = select('t.address = @address AND (@chain IS NULL OR (t.address_namespace = @namespace AND t.address_chain = @chain))');
    this.#byEmail = select('t.email = @email');
    this.#byHost = select(`t.host = @host AND t.type IN (${TYPES_READ_AS.url.map((type) => `'${type}'`).join(', ')})`);
  }

  lookup(value: string, options: LookupOptions = {}): LookupResult {
    const organization = options.organization ?? null;
    const listAtMost = options.listAtMost ?? MAX_MATCHES_PER_VALUE;
    // One row more than is listed tells that there are more; one row at least answers `blocked`.
    const limit = listAtMost + 1;
    const matches = new ValueMatches(value, limit, options.allowlist);
    const add = (rows: Iterable<Row>, match: (row: Row) => LookupMatchKind): void => {
      for (const row of rows) {
        if (matches.done) return;
        matches.add(row, match);
      }
    };
    const trimmed = value.trim();
    // The URL a browser opens for the value (web-url.ts); free text without a scheme that does not
    // start with a host name is matched exactly, never guessed to be a URL.
    const url = readWebUrl(value);
    const expressions = url === null ? [] : coveringExpressions(url);
    // Exact matches first, as they are the strongest answer; then the expressions', by id.
    const listIds = (ids: Iterable<unknown>, match: (row: Row) => LookupMatchKind): void => {
      for (const id of ids) {
        if (matches.done) return;
        if (matches.has(id as number)) continue;
        const row = this.#listedRow.get({ id, organization }) as Row | undefined;
        // undefined: removed for every organization (or not blocked for the one asked about)
        if (row) matches.add(row, match);
      }
    };
    listIds(this.#exactIds.iterate({ value }), () => ({ by: 'exact' }));
    if (expressions.length > 0) {
      const bound: Record<string, string> = {};
      expressions.forEach((expression, index) => {
        bound[`e${index}`] = expression;
      });
      listIds(this.#expressionIds(expressions.length).iterate(bound), (row) => ({ by: 'expression', expression: row.url_expression ?? '' }));
    }
    const address = parseAddress(trimmed);
    if (address !== null) {
      const params = { address: address.address, namespace: address.addressNamespace, chain: address.addressChain, organization };
      add(this.#byAddress.iterate(params) as IterableIterator<Row>, () => ({ by: 'address' }));
    }
    const email = parseEmail(trimmed);
    if (email !== null) add(this.#byEmail.iterate({ email: email.email, organization }) as IterableIterator<Row>, () => ({ by: 'email' }));
    const found = [...matches.listed.values()];
    const result: LookupResult = {
      value,
      blocked: matches.blocking,
      ...(found.length > 0 && !matches.blocking ? { allowed: true as const } : {}),
      matches: found.slice(0, listAtMost),
      ...(matches.more || found.length > listAtMost ? { matches_truncated: true as const } : {}),
    };
    if (!options.sameHost) return result;
    return { ...result, ...(url === null ? { same_host: [] } : this.#sameHost(url.host, { organization, matched: matches.listed, listAtMost })) };
  }

  /** Threats of the URL's host that did not match it (context for --json), and whether there are more. */
  #sameHost(host: string, { organization, matched, listAtMost }: { organization: string | null; matched: ReadonlyMap<number, LookupMatch>; listAtMost: number }): Pick<LookupResult, 'same_host' | 'same_host_truncated'> {
    const hostRows = firstRows(this.#byHost, { host, organization }, listAtMost + 1);
    const sameHost = hostRows.filter((row) => !matched.has(row.id)).slice(0, listAtMost);
    return {
      same_host: sameHost.map((row) => ({ id: row.id, content: row.content, type: row.type, organizations: organizationsOf(row) })),
      ...(hostRows.length > listAtMost ? { same_host_truncated: true as const } : {}),
    };
  }
}

/**
 * The whole answer for a list of values. Looks values up in slices and yields to the event loop
 * between them, so a request of 1,000 values never holds /healthz or a sync's work for long, and
 * no read transaction stays open across slices (a long one would stop WAL checkpoints).
 */
export async function lookupValues(lookup: ThreatLookup, values: readonly string[], options: LookupOptions = {}): Promise<LookupDocument> {
  const results: LookupResult[] = [];
  const budget = new ListingBudget(MAX_LISTED_CONTENT_CHARS);
  for (let offset = 0; offset < values.length; offset += LOOKUP_SLICE) {
    if (offset > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    for (const value of values.slice(offset, offset + LOOKUP_SLICE)) {
      results.push(budget.fit(lookup.lookup(value, { ...options, listAtMost: budget.spent ? 0 : MAX_MATCHES_PER_VALUE })));
    }
  }
  return { results };
}

/** What an answer may still list; once an entry does not fit, nothing more is listed. */
class ListingBudget {
  #left: number;

  constructor(chars: number) {
    this.#left = chars;
  }

  get spent(): boolean {
    return this.#left <= 0;
  }

  fit(result: LookupResult): LookupResult {
    let fitted = result;
    const matches = this.#take(result.matches);
    if (matches < result.matches.length) fitted = { ...fitted, matches: result.matches.slice(0, matches), matches_truncated: true };
    if (result.same_host) {
      const sameHost = this.#take(result.same_host);
      if (sameHost < result.same_host.length) fitted = { ...fitted, same_host: result.same_host.slice(0, sameHost), same_host_truncated: true };
    }
    return fitted;
  }

  /** How many of `entries` fit, charged to the budget (content, the expression matched, and ~100 for the rest). */
  #take(entries: ReadonlyArray<{ readonly content: string; readonly match?: LookupMatchKind; readonly allowed_by?: AllowedBy }>): number {
    let taken = 0;
    for (const entry of entries) {
      const allowedBy = entry.allowed_by === undefined ? 0 : entry.allowed_by.entry.length + (entry.allowed_by.reason?.length ?? 0) + 60;
      const cost = entry.content.length + (entry.match?.by === 'expression' ? entry.match.expression.length : 0) + allowedBy + 100;
      if (cost > this.#left) {
        this.#left = 0;
        break;
      }
      this.#left -= cost;
      taken += 1;
    }
    return taken;
  }
}

const LOOKUP_SLICE = 50;

/** The first `count` rows: a value with thousands of matches never has them all in the heap. */
function firstRows(statement: Database.Statement, params: Record<string, unknown>, count: number): Row[] {
  const rows: Row[] = [];
  for (const row of statement.iterate(params) as IterableIterator<Row>) {
    rows.push(row);
    if (rows.length >= count) break;
  }
  return rows;
}


/** Checks a request's values: 1 to 1,000 non-empty strings. Returns the reason when they are not. */
export function checkLookupValues(values: unknown): string | null {
  if (!Array.isArray(values)) return '"values" must be an array of strings';
  if (values.length === 0) return 'give at least one value to look up';
  if (values.length > MAX_LOOKUP_VALUES) return `at most ${MAX_LOOKUP_VALUES} values per request (got ${values.length})`;
  const bad = values.findIndex((value) => typeof value !== 'string' || value.trim() === '');
  if (bad >= 0) return `value ${bad + 1} must be a non-empty string`;
  return null;
}
