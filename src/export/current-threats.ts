// Reads what exports are made of: the threats currently blocked (no removed_at), from a read-only
// connection, inside one read transaction so every part of an export sees the same snapshot. With
// THREAT_MIRROR_ALLOWLIST, the threats it allows are left out here, and counted by the reader.
import type Database from 'better-sqlite3';
import type { AllowMatcher } from '../allowlist/allow-matcher.js';
import { allowedThreatIds } from './allowed-threats.js';
import type { Threat } from '../records.js';
import { inForce } from '../db/read/in-force.js';
import type { LookupFields } from '../url/lookup-fields.js';
import type { HostSource } from './host-selection.js';

/** A threat blocked now, with its lookup columns (all but those of URLs that record formats do not carry). */
export interface CurrentThreat extends Threat, Omit<LookupFields, 'urlExpression' | 'exportHost' | 'exportLeftOut'> {
  readonly firstSeenAt: string;
  readonly updatedAt: string;
  readonly changeSeq: number;
  /** The configured organizations that block it now, sorted. */
  readonly organizations: readonly string[];
}

/** What a STIX indicator is made of. */
export type IndicatorSource = Pick<CurrentThreat, 'id' | 'content' | 'type' | 'blockedAt' | 'firstSeenAt' | 'updatedAt' | 'changeSeq' | 'email'> & Pick<LookupFields, 'exportHost'>;

/** The columns of threats() in order; rows are read as arrays (raw), a third faster than as objects at 1M. */
type Row = [
  id: number, content: string, type: string, blockedAt: string, firstSeenAt: string, updatedAt: string, changeSeq: number,
  host: string | null, registrableDomain: string | null, addressNamespace: string | null, addressChain: string | null,
  address: string | null, email: string | null, emailDomain: string | null, organizations: string,
];

/** Threats with `after < id <= through` (either bound absent: unbounded), for reading a mirror in blocks. */
export interface IdRange {
  readonly after?: number | undefined;
  readonly through?: number | undefined;
}

/** Where the threats an allowlist leaves out are counted. */
export interface AllowedCount {
  allowed: number;
}

/** An organization's (or every organization's) current threats, as one consistent snapshot. */
export class ThreatSnapshot {
  readonly #sqlite: Database.Database;
  readonly #organization: string | undefined;
  /** The mirror's change feed position: it moves on every insert, change, removal and restoration. */
  readonly changeSeq: number;
  /** THREAT_MIRROR_ALLOWLIST as the export reads it; undefined: none is configured (nothing is counted as allowed). */
  readonly allowlist: AllowMatcher | undefined;
  /** The threats it allows in this snapshot (allowed-threats.ts); undefined when none can be. */
  readonly #allowed: ReadonlySet<number> | undefined;

  /** `allowedIds`: what the list allows in this very version of the mirror, when already found (a helper thread's snapshot). */
  constructor(sqlite: Database.Database, organization: string | undefined, allowlist?: AllowMatcher, allowedIds?: readonly number[]) {
    this.#sqlite = sqlite;
    this.#organization = organization;
    this.allowlist = allowlist;
    // A read transaction: later statements see the file as it is now, whatever the writer commits.
    sqlite.exec('BEGIN');
    this.changeSeq = sqlite.prepare('SELECT coalesce(max(change_seq), 0) FROM threats').pluck().get() as number;
    if (allowlist !== undefined && allowlist.size > 0) this.#allowed = allowedIds === undefined ? allowedThreatIds(sqlite, allowlist) : new Set(allowedIds);
  }

  /** The ids the allowlist allows in this snapshot, for a helper thread's snapshot of the same version. */
  get allowedIds(): number[] {
    return [...(this.#allowed ?? [])];
  }

  /** Current threats ordered by id; removed ones never appear, allowed ones are counted in `skipped`. */
  *threats(range: IdRange = {}, skipped?: AllowedCount): Generator<CurrentThreat> {
    const scope = this.#organization === undefined ? '' : ' AND o.organization = ?';
    const statement = this.#sqlite.prepare(
      `SELECT t.id, t.content, t.type, t.blocked_at, t.first_seen_at, t.updated_at, t.change_seq,
              t.host, t.registrable_domain, t.address_namespace, t.address_chain, t.address, t.email, t.email_domain,
              group_concat(o.organization, ',') AS organizations
         FROM threats t JOIN in_force o ON o.threat_id = t.id
        WHERE 1${scope}${rangeSql(range)}
        GROUP BY t.id ORDER BY t.id`,
    );
    const rows = statement.raw().iterate(...this.#scopeValues(), ...rangeValues(range)) as IterableIterator<Row>;
    for (const row of rows) {
      if (this.#skips(row[0], skipped)) continue;
      const [id, content, type, blockedAt, firstSeenAt, updatedAt, changeSeq, host, registrableDomain, addressNamespace, addressChain, address, email, emailDomain, organizations] = row;
      yield {
        id, content, type, blockedAt, firstSeenAt, updatedAt, changeSeq, host, registrableDomain, addressNamespace, addressChain, address, email, emailDomain,
        // group_concat's order is unspecified; organization names never contain a comma.
        organizations: organizations.split(',').sort(),
      };
    }
  }

  /**
   * Current threats ordered by id with only what a STIX indicator is made of: no organizations (no
   * grouping) and no lookup columns but the e-mail. At 1M threats the grouped read of every column
   * was ~4.6 s of a ~10 s STIX export.
   */
  *indicatorSources(range: IdRange = {}, skipped?: AllowedCount): Generator<IndicatorSource> {
    const rows = this.#sqlite.prepare(`SELECT t.id, t.content, t.type, t.blocked_at, t.first_seen_at, t.updated_at, t.change_seq, t.email, t.export_host FROM threats t WHERE ${this.#current()}${rangeSql(range)} ORDER BY t.id`)
      .raw().iterate(...this.#scopeValues(), ...rangeValues(range)) as IterableIterator<[number, string, string, string, string, string, number, string | null, string | null]>;
    for (const row of rows) {
      if (this.#skips(row[0], skipped)) continue;
      const [id, content, type, blockedAt, firstSeenAt, updatedAt, changeSeq, email, exportHost] = row;
      yield { id, content, type, blockedAt, firstSeenAt, updatedAt, changeSeq, email, exportHost };
    }
  }

  /**
   * Current threats of the given types with what they give the host formats (the stored
   * export_host and export_left_out), each once: all the host formats read. Reading only these
   * columns, without grouping organizations, took 1.0 s at 1M threats where threats() took 5.5 s
   * (docs/performance.md).
   */
  *ofTypes(types: ReadonlySet<string>, range: IdRange = {}, skipped?: AllowedCount): Generator<HostSource> {
    const rows = this.#sqlite.prepare(`SELECT t.type, t.export_host, t.export_left_out${this.#idColumn()} FROM threats t WHERE t.type IN (${[...types].map(() => '?').join(', ')}) AND ${this.#current()}${rangeSql(range)}`)
      .raw().iterate(...types, ...this.#scopeValues(), ...rangeValues(range)) as IterableIterator<[string, string | null, string | null, number?]>;
    for (const row of rows) if (!this.#skips(row[3], skipped)) yield { type: row[0], exportHost: row[1], exportLeftOut: row[2] };
  }

  /**
   * Every current threat's type with what it gives the host formats: what they read when they
   * count the other types as they go (parallel-render.ts).
   */
  *hostSources(range: IdRange = {}, skipped?: AllowedCount): Generator<HostSource> {
    const rows = this.#sqlite.prepare(`SELECT t.type, t.export_host, t.export_left_out${this.#idColumn()} FROM threats t WHERE ${this.#current()}${rangeSql(range)}`)
      .raw().iterate(...this.#scopeValues(), ...rangeValues(range)) as IterableIterator<[string, string | null, string | null, number?]>;
    for (const row of rows) if (!this.#skips(row[3], skipped)) yield { type: row[0], exportHost: row[1], exportLeftOut: row[2] };
  }

  /** How many current threats are of none of the given types (allowed ones too: with an allowlist, count with hostSources). */
  countOtherTypes(types: ReadonlySet<string>): number {
    return this.#sqlite.prepare(`SELECT count(*) FROM threats t WHERE t.type NOT IN (${[...types].map(() => '?').join(', ')}) AND ${this.#current()}`)
      .pluck().get(...types, ...this.#scopeValues()) as number;
  }

  /** Queries that read no id read it when the allowlist may leave rows out. */
  #idColumn(): string {
    return this.#allowed === undefined ? '' : ', t.id';
  }

  /** Whether the allowlist allows the threat `id`; counted in `skipped` if so. */
  #skips(id: number | undefined, skipped: AllowedCount | undefined): boolean {
    if (this.#allowed === undefined || id === undefined || !this.#allowed.has(id)) return false;
    if (skipped !== undefined) skipped.allowed += 1;
    return true;
  }

  /** "In force for some organization (or the one asked about)", on the threat aliased t. */
  #current(): string {
    return inForce('t', this.#organization === undefined ? '' : 'f.organization = ?');
  }

  #scopeValues(): string[] {
    return this.#organization === undefined ? [] : [this.#organization];
  }

  /**
   * The last id of each block of `rows` threats (current or not) after `after`, in order; the last
   * block ends at the last threat. An OFFSET walk of the id index: ~1 ms a block of 5,000.
   */
  blockEnds(rows: number): number[] {
    const next = this.#sqlite.prepare(`SELECT id FROM threats WHERE id > ? ORDER BY id LIMIT 1 OFFSET ${rows - 1}`).pluck();
    const last = this.#sqlite.prepare('SELECT max(id) FROM threats').pluck().get() as number | null;
    const ends: number[] = [];
    if (last === null) return ends;
    for (let end = next.get(Number.MIN_SAFE_INTEGER) as number | undefined; end !== undefined && end < last; end = next.get(end) as number | undefined) ends.push(end);
    ends.push(last);
    return ends;
  }

  /** Ends the read transaction; the connection stays the caller's. */
  close(): void {
    if (this.#sqlite.inTransaction) this.#sqlite.exec('COMMIT');
  }
}

function rangeSql(range: IdRange): string {
  return `${range.after === undefined ? '' : ' AND t.id > ?'}${range.through === undefined ? '' : ' AND t.id <= ?'}`;
}

function rangeValues(range: IdRange): number[] {
  return [range.after, range.through].filter((bound): bound is number => bound !== undefined);
}
