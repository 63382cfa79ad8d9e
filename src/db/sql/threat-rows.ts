// Every write of the tables threats and organization_threats: a page's rows, the change feed's
// counter, the removals a window's conclusion confirms, and the lookup columns of rows written
// before those columns existed.
//
// Raw better-sqlite3 statements rather than drizzle's: per row, drizzle's placeholder mapping cost
// more than SQLite's own work (profiled: 1.9 s of 5.1 s for 200,000 threats). Rows go in
// multi-row statements of 100, 10 and 1 rows, prepared once: a full page is one call, and the
// statement cache stays at three sizes of each (one per partial-page size held ~15 MB more at 1M
// threats). Rows whose ids are all new go in without ON CONFLICT and RETURNING (see #noneStored).
import type { Threat } from '../../records.js';
import type { LookupFields } from '../../url/lookup-fields.js';
import type { Database, Statement } from '../sqlite.js';

export type DeriveLookupFields = (type: string, content: string) => LookupFields;

/** What writing a set of threats changed. */
export interface ThreatWriteCounts {
  readonly inserted: number;
  readonly updated: number;
  /** The threats stored before whose row changed (their day may have: see DayLedgerRows.joinDayOfThreat). */
  readonly updatedIds: readonly number[];
}

const NONE: readonly number[] = [];

const THREAT_COLUMNS = `id, content, type, blocked_at, first_seen_at, updated_at, change_seq,
  host, registrable_domain, address_namespace, address_chain, address, email, email_domain, url_expression, export_host, export_left_out`;
const COLUMN_COUNT = 17;

function insertSql(rows: number): string {
  return `INSERT INTO threats (${THREAT_COLUMNS}) VALUES ${placeholders(rows, COLUMN_COUNT)}`;
}

/** Which of a chunk's ids are stored: asked before the upsert, whose RETURNING shows rows only as they end. */
function storedAmongSql(rows: number): string {
  return `SELECT id FROM threats WHERE id IN ${placeholders(1, rows)}`;
}

/** Writes only what changed, and returns what it wrote. */
function upsertSql(rows: number): string {
  return `INSERT INTO threats (${THREAT_COLUMNS})
         VALUES ${placeholders(rows, COLUMN_COUNT)}
         ON CONFLICT (id) DO UPDATE SET content = excluded.content, type = excluded.type, blocked_at = excluded.blocked_at,
           updated_at = excluded.updated_at, change_seq = excluded.change_seq, host = excluded.host,
           registrable_domain = excluded.registrable_domain, address_namespace = excluded.address_namespace,
           address_chain = excluded.address_chain, address = excluded.address, email = excluded.email, email_domain = excluded.email_domain,
           url_expression = excluded.url_expression, export_host = excluded.export_host, export_left_out = excluded.export_left_out
         WHERE threats.content IS NOT excluded.content OR threats.type IS NOT excluded.type OR threats.blocked_at IS NOT excluded.blocked_at
         RETURNING id`;
}

/**
 * New links, removed ones restored, and each link's own type and scope as this walk returned it;
 * `returning`: which links changed (the others were current, in scope and of that type already).
 * Whether a link is out of scope is decided by the organization's recorded scope and the type its
 * walk returned: a link hidden as out of scope that comes back in a scoped type is shown again, and
 * a walk that returns a type outside the scope (one that asked for every type) never shows it.
 */
function linkSql(rows: number, returning: boolean): string {
  return `INSERT INTO organization_threats (organization, threat_id, first_seen_at, type, out_of_scope) VALUES ${placeholders(rows, 5)}
         ON CONFLICT DO UPDATE SET removed_at = NULL, out_of_scope = excluded.out_of_scope, type = excluded.type
         WHERE removed_at IS NOT NULL OR out_of_scope IS NOT excluded.out_of_scope OR type IS NOT excluded.type${returning ? ' RETURNING threat_id' : ''}`;
}

/** An organization's recorded asset type scope; null: every type. */
export type ScopeTypes = ReadonlySet<string> | null;

const MARK_REMOVED_SQL = 'UPDATE organization_threats SET removed_at = ? WHERE organization = ? AND threat_id = ? AND removed_at IS NULL';

/** The highest floor of the change feed: room for 2^50 changes below Number.MAX_SAFE_INTEGER, past which a double counts no longer one by one. */
const LATEST_FEED_FLOOR = Number.MAX_SAFE_INTEGER - 2 ** 50;

const MOVE_IN_FEED_SQL = 'UPDATE threats SET change_seq = ? WHERE id = ?';

const BACKFILL_LOOKUPS_SQL = `UPDATE threats SET change_seq = :changeSeq, host = :host, registrable_domain = :registrableDomain,
              address_namespace = :addressNamespace, address_chain = :addressChain, address = :address, email = :email,
              email_domain = :emailDomain, url_expression = :urlExpression, export_host = :exportHost, export_left_out = :exportLeftOut
        WHERE id = :id`;

const LOOKUP_COLUMNS = ['host', 'registrableDomain', 'addressNamespace', 'addressChain', 'address', 'email', 'emailDomain', 'urlExpression', 'exportHost', 'exportLeftOut'] as const satisfies ReadonlyArray<keyof LookupFields>;

/**
 * Rows whose lookup columns are derived at the writer's start are read one at a time by id: a
 * content may be megabytes (the service sets no limit) and the writer's heap is 16 MB, which a
 * batch of such rows read at once would exceed, at every start.
 */
const STORED_LOOKUPS_SQL = `SELECT type, content, host, registrable_domain AS registrableDomain, address_namespace AS addressNamespace,
              address_chain AS addressChain, address, email, email_domain AS emailDomain, url_expression AS urlExpression,
              export_host AS exportHost, export_left_out AS exportLeftOut
         FROM threats WHERE id = ?`;

const CHUNK_SIZES = [100, 10, 1] as const;

export class ThreatRows {
  readonly #sqlite: Database;
  // Prepared once per size of multi-row statement (see CHUNK_SIZES).
  readonly #inserts = new Map<number, Statement>();
  readonly #upserts = new Map<number, Statement>();
  readonly #storedAmong = new Map<number, Statement>();
  readonly #newLinks = new Map<number, Statement>();
  readonly #links = new Map<number, Statement>();
  readonly #anyStoredBetween: Statement;
  readonly #moveInFeed: Statement;
  readonly #markRemoved: Statement;
  /** Prepared at the first use: only a start after the lookup rules changed derives rows again. */
  #rederive: { readonly ids: Statement; readonly row: Statement; readonly update: Statement } | undefined;
  /** The last change_seq handed out; one writer per file, so a counter in memory is exact. */
  #changeSeq: number;

  constructor(sqlite: Database) {
    this.#sqlite = sqlite;
    this.#anyStoredBetween = sqlite.prepare('SELECT 1 FROM threats WHERE id BETWEEN ? AND ?');
    this.#moveInFeed = sqlite.prepare(MOVE_IN_FEED_SQL);
    this.#markRemoved = sqlite.prepare(MARK_REMOVED_SQL);
    this.#changeSeq = sqlite.prepare('SELECT coalesce(max(change_seq), 0) FROM threats').pluck().get() as number;
  }

  /**
   * The change feed goes on from at least `floor`, the writer's start in microseconds since the
   * epoch: a file built anew (a new pod without a replica, a volume lost) counted from 1 again, and
   * one restored from a replica that lags counted again numbers its predecessor had given other
   * changes, so a reader keeping the last number it saw missed every change up to it. A clock has
   * no such reset: a writer makes far fewer than a million changes a second (a 1M backfill ~50,000),
   * so every number it gave stays below the next start's floor, whichever file that start opens.
   * A clock past LATEST_FEED_FLOOR (2220; THREAT_MIRROR_NOW, or a system clock set wrong) floors
   * there: the numbers then go on one by one, still exact in a double for 2^50 more changes.
   */
  startFeedAt(floor: number): void {
    this.#changeSeq = Math.max(this.#changeSeq, Math.min(floor, LATEST_FEED_FLOOR) - 1);
  }

  /**
   * Writes what changed of these threats and links them to the organization, in the caller's
   * transaction; counts the rows inserted and updated. `lookups` are the threats' lookup columns,
   * in order; `scope` the organization's recorded scope (a link of another type is hidden).
   */
  write(organization: string, all: readonly Threat[], lookups: readonly LookupFields[], stamp: string, scope: ScopeTypes = null): ThreatWriteCounts {
    const { threats, fields } = uniqueById(all, lookups);
    let inserted = 0;
    let updated = 0;
    let updatedIds: number[] | undefined;
    for (const [offset, chunk] of chunks(threats)) {
      const values: unknown[] = [];
      chunk.forEach((threat, index) => {
        const lookup = fields[offset + index] as LookupFields;
        // Each row is offered the next change_seq; it keeps it only if it is written, so the
        // feed may skip numbers but never repeats or goes back.
        this.#changeSeq += 1;
        values.push(
          threat.id, threat.content, threat.type, threat.blockedAt, stamp, stamp, this.#changeSeq,
          lookup.host, lookup.registrableDomain, lookup.addressNamespace, lookup.addressChain, lookup.address, lookup.email, lookup.emailDomain,
          lookup.urlExpression, lookup.exportHost, lookup.exportLeftOut,
        );
      });
      const links: unknown[] = [];
      for (const threat of chunk) links.push(organization, threat.id, stamp, threat.type, scope === null || scope.has(threat.type) ? 0 : 1);
      if (this.#noneStored(chunk)) {
        // All new (a first backfill's pages, as a rule): inserted without RETURNING, whose rows
        // cost ~1 µs each (measured), and every link needs no feed move: its threat has just
        // been given one.
        this.#statement(this.#inserts, chunk.length, insertSql).run(values);
        inserted += chunk.length;
        this.#statement(this.#newLinks, chunk.length, (rows) => linkSql(rows, false)).run(links);
        continue;
      }
      // Inserted or updated is told by what was stored before, never by `first_seen_at = stamp`: a
      // row stored by another process (a restored replica's primary, a clock set back, a test's
      // fixed clock) may carry this very stamp, and an update counted as an insert would leave
      // its day unjoined to the other organizations' ledgers (#joinDays in page-writer.ts).
      const storedBefore = new Set(this.#statement(this.#storedAmong, chunk.length, storedAmongSql).pluck().all(chunk.map((threat) => threat.id)) as number[]);
      // A row is returned only when written.
      const written = this.#statement(this.#upserts, chunk.length, upsertSql).pluck().all(values) as number[];
      const writtenIds = new Set<number>();
      for (const id of written) {
        writtenIds.add(id);
        if (!storedBefore.has(id)) inserted += 1;
        else {
          updated += 1;
          (updatedIds ??= []).push(id);
        }
      }
      // A new or restored link changes what a reader of this organization sees: it moves the feed too.
      const linked = this.#statement(this.#links, chunk.length, (rows) => linkSql(rows, true)).all(links) as Array<{ threat_id: number }>;
      for (const { threat_id: id } of linked) {
        if (!writtenIds.has(id)) this.#moveInFeed.run(++this.#changeSeq, id);
      }
    }
    return { inserted, updated, updatedIds: updatedIds ?? NONE };
  }

  /** Marks the organization's link to a threat removed (and moves the threat in the feed); false when it was not current. */
  markRemoved(organization: string, id: number, stamp: string): boolean {
    if (this.#markRemoved.run(stamp, organization, id).changes === 0) return false;
    this.#moveInFeed.run(++this.#changeSeq, id);
    return true;
  }

  /** The threat takes the next change_seq: what a reader of some organization sees of it changed. */
  moveInFeed(id: number): void {
    this.#moveInFeed.run(++this.#changeSeq, id);
  }

  /**
   * Rows written before the lookup columns and the change feed existed (change_seq 0): derive
   * their columns and give each a place in the feed, a batch per transaction. `derive` is asked
   * for only when there is such a row.
   */
  async backfillLookups(derive: () => Promise<DeriveLookupFields>): Promise<number> {
    const pending = this.#sqlite.prepare('SELECT id FROM threats WHERE change_seq = 0 LIMIT 1000').pluck();
    if (pending.get() === undefined) return 0;
    const fieldsOf = await derive();
    const update = this.#sqlite.prepare(BACKFILL_LOOKUPS_SQL);
    const stored = this.#sqlite.prepare(STORED_LOOKUPS_SQL);
    const batch = this.#sqlite.transaction(() => {
      const ids = pending.all() as number[];
      for (const id of ids) {
        const row = stored.get(id) as { type: string; content: string };
        update.run({ ...fieldsOf(row.type, row.content), changeSeq: ++this.#changeSeq, id });
      }
      return ids.length;
    });
    let total = 0;
    for (let done = batch.immediate(); done > 0; done = batch.immediate()) total += done;
    return total;
  }

  /**
   * The rows after id `after` (up to `limit`, by id) derived again by `derive`: those whose lookup
   * columns change are rewritten and move in the feed (an export index and feed readers see them
   * again), the others are left as they are. In the caller's transaction; returns the last id read
   * (undefined when there was none), the rows read and how many changed.
   */
  rederiveLookups(after: number, limit: number, derive: DeriveLookupFields): { lastId: number | undefined; read: number; changed: number } {
    this.#rederive ??= {
      ids: this.#sqlite.prepare('SELECT id FROM threats WHERE id > ? ORDER BY id LIMIT ?').pluck(),
      row: this.#sqlite.prepare(STORED_LOOKUPS_SQL),
      update: this.#sqlite.prepare(BACKFILL_LOOKUPS_SQL),
    };
    const ids = this.#rederive.ids.all(after, limit) as number[];
    let changed = 0;
    for (const id of ids) {
      const row = this.#rederive.row.get(id) as LookupFields & { type: string; content: string };
      const fields = derive(row.type, row.content);
      if (LOOKUP_COLUMNS.every((column) => fields[column] === row[column])) continue;
      this.#rederive.update.run({ ...fields, changeSeq: ++this.#changeSeq, id });
      changed += 1;
    }
    return { lastId: ids.at(-1), read: ids.length, changed };
  }

  /** Whether a threat with an id above `id` is stored: one seek of the primary key. */
  storedAfter(id: number): boolean {
    return this.#anyStoredBetween.get(id + 1, Number.MAX_SAFE_INTEGER) !== undefined;
  }

  /** True when no stored threat has an id within the chunk's: one seek of the primary key. */
  #noneStored(chunk: readonly Threat[]): boolean {
    let low = Infinity;
    let high = -Infinity;
    for (const threat of chunk) {
      if (threat.id < low) low = threat.id;
      if (threat.id > high) high = threat.id;
    }
    return this.#anyStoredBetween.get(low, high) === undefined;
  }

  #statement(cache: Map<number, Statement>, rows: number, sql: (rows: number) => string): Statement {
    let statement = cache.get(rows);
    if (!statement) {
      statement = this.#sqlite.prepare(sql(rows));
      cache.set(rows, statement);
    }
    return statement;
  }
}

/** Splits rows into runs of 100, 10 and 1, the sizes the statements are prepared for; each with its offset. */
export function* chunks<T>(rows: readonly T[]): Generator<[number, readonly T[]]> {
  let offset = 0;
  for (const size of CHUNK_SIZES) {
    while (rows.length - offset >= size) {
      yield [offset, rows.slice(offset, offset + size)];
      offset += size;
    }
  }
}

function placeholders(rows: number, columns: number): string {
  const row = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
  return Array.from({ length: rows }, () => row).join(', ');
}

/**
 * A page that repeats an id keeps the last copy (one statement may not upsert the same row twice),
 * with that copy's lookup columns.
 */
export function uniqueById(threats: readonly Threat[], fields: readonly LookupFields[]): { threats: readonly Threat[]; fields: readonly LookupFields[] } {
  const ids = new Set<number>();
  let duplicate = false;
  for (const threat of threats) {
    if (ids.has(threat.id)) duplicate = true;
    ids.add(threat.id);
  }
  if (!duplicate) return { threats, fields };
  // A Map keeps each id where it first came, with the index of its last copy.
  const last = new Map<number, number>();
  threats.forEach((threat, index) => last.set(threat.id, index));
  const kept = [...last.values()];
  return { threats: kept.map((index) => threats[index] as Threat), fields: kept.map((index) => fields[index] as LookupFields) };
}
