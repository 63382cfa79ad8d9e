// The hot path: one page of records and the checkpoint after it, in one synchronous transaction.
//
// Raw better-sqlite3 statements rather than drizzle's: per row, drizzle's placeholder mapping cost
// more than SQLite's own work (profiled: 1.9 s of 5.1 s for 200,000 threats). Rows go in
// multi-row statements of 100, 10 and 1 rows, prepared once: a full page is one call, and the
// statement cache stays at three sizes of each (one per partial-page size held ~15 MB more at 1M
// threats). Rows whose ids are all new go in without ON CONFLICT and RETURNING (see #noneStored).
import type Database from 'better-sqlite3';
import type { RejectedRecord, Threat } from '../records.js';
import { addDays, daysBetween } from '../lib/days.js';
import { deriveLookupFields, type LookupFields } from '../url/lookup-fields.js';
import { addToDayDigests, type DayDigest, type DigestedThreat, digestHex, emptyDigest } from './content-hash.js';
import { CURRENT_LINK_SQL, RECORD_LEDGER_DAY_SQL, THREAT_IDS_BETWEEN_SQL, WINDOW_THREATS_SQL } from './day-ledger.js';
import { INSERT_REJECTED_RECORD_SQL } from './rejected-records.js';
import { COUNT_THREAT_PAGE_SQL } from './run-state.js';

export interface PageCounts {
  readonly inserted: number;
  readonly updated: number;
  readonly rejected: number;
}

export interface PageInput {
  readonly organization: string;
  readonly runId: number;
  readonly window: { readonly planId: number; readonly windowStart: string; readonly windowEnd: string };
  readonly threats: readonly Threat[];
  readonly rejected: readonly RejectedRecord[];
  readonly nextPage: string | null;
  readonly retries: number;
  /** This page's write stamp; strictly later than the previous page's. */
  readonly stamp: string;
  /**
   * On a window's last page: every id the walk returned, when it was walked from its first page in
   * one go. Threats of the window's days not among them are marked removed. Null for a window
   * resumed mid-way: its earlier pages' ids are gone, so nothing may be concluded from absence.
   */
  readonly windowSeenIds: ReadonlySet<number> | null;
  /**
   * On a window's last page, with windowSeenIds: each day's digest of the records as the walk
   * received them. Null when the walk cannot vouch for them (an id came twice, or a record lay
   * outside the window's days): the window's rows are then read back and hashed.
   */
  readonly windowDigests: ReadonlyMap<string, DayDigest> | null;
  /** Pages of the window so far, this one included (recorded in the ledger). */
  readonly windowPages: number;
  /** Each threat's lookup columns, in order, when the sender derived them (the sync does); derived here otherwise. */
  readonly lookups?: readonly LookupFields[] | undefined;
}

export interface PageResult extends PageCounts {
  /** Threats marked removed for this organization when the window completed. */
  readonly removed: number;
}

/** What a batch gives each of its pages: what writing it changed, or why it was not written. */
export type PageOutcome = { readonly result: PageResult; readonly error?: undefined } | { readonly error: Error; readonly result?: undefined };

/** A page left unwritten because an earlier page of its window failed; carries that failure's code. */
export class PageNotWrittenError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'PageNotWrittenError';
  }
}

type Statement = Database.Statement<unknown[], unknown>;

export class PageWriter {
  readonly #sqlite: Database.Database;
  // Prepared once per size of multi-row statement (see CHUNK_SIZES).
  readonly #inserts = new Map<number, Statement>();
  readonly #upserts = new Map<number, Statement>();
  readonly #newLinks = new Map<number, Statement>();
  readonly #links = new Map<number, Statement>();
  readonly #anyStoredBetween: Statement;
  readonly #insertRejected: Statement;
  readonly #advanceCursor: Statement;
  readonly #addWindow: Statement;
  readonly #completeDay: Statement;
  readonly #countRunPage: Statement;
  readonly #windowThreats: Statement;
  readonly #threatIdsBetween: Statement;
  readonly #currentLink: Statement;
  readonly #markRemoved: Statement;
  readonly #bumpChangeSeq: Statement;
  readonly #write: Database.Transaction<(input: PageInput) => PageResult>;
  readonly #writeMany: Database.Transaction<(inputs: readonly PageInput[]) => PageResult[]>;
  /** Windows of a run with a page that failed to write, and why (see writeBatch). */
  readonly #failedWindows = new Map<string, { message: string; code: string | undefined }>();
  /** The last change_seq handed out; one writer per file, so a counter in memory is exact. */
  #changeSeq: number;

  readonly #derive: (type: string, content: string) => LookupFields;

  /** `derive` is replaceable so the benchmark can measure what the lookup columns cost. */
  constructor(sqlite: Database.Database, derive: (type: string, content: string) => LookupFields = deriveLookupFields) {
    this.#sqlite = sqlite;
    this.#derive = derive;
    // A multi-row upsert keeps a statement journal (the pages it touched, to undo that statement
    // alone); in memory rather than in a temporary file it costs a copy instead of a write per
    // page: +16% upsert throughput at 1,000,000 threats (measured). Set here, not for every
    // writing connection: a page's statements are small, a migration's index build is not.
    sqlite.pragma('temp_store = MEMORY');
    this.#insertRejected = sqlite.prepare(INSERT_REJECTED_RECORD_SQL);
    this.#advanceCursor = sqlite.prepare(
      'UPDATE sync_cursors SET next_page = ?, pages = pages + 1, records = records + ?, completed_at = ? WHERE plan_id = ? AND window_start = ?',
    );
    this.#addWindow = sqlite.prepare('INSERT INTO sync_cursors (plan_id, window_start, window_end) VALUES (?, ?, ?)');
    this.#completeDay = sqlite.prepare(RECORD_LEDGER_DAY_SQL);
    this.#windowThreats = sqlite.prepare(WINDOW_THREATS_SQL);
    this.#threatIdsBetween = sqlite.prepare(THREAT_IDS_BETWEEN_SQL).pluck();
    this.#currentLink = sqlite.prepare(CURRENT_LINK_SQL).pluck();
    this.#markRemoved = sqlite.prepare('UPDATE organization_threats SET removed_at = ? WHERE organization = ? AND threat_id = ?');
    this.#bumpChangeSeq = sqlite.prepare('UPDATE threats SET change_seq = ? WHERE id = ?');
    this.#anyStoredBetween = sqlite.prepare('SELECT 1 FROM threats WHERE id BETWEEN ? AND ?');
    this.#changeSeq = sqlite.prepare('SELECT coalesce(max(change_seq), 0) FROM threats').pluck().get() as number;
    this.#countRunPage = sqlite.prepare(COUNT_THREAT_PAGE_SQL);
    this.#write = sqlite.transaction((input: PageInput) => this.#writePage(input));
    this.#writeMany = sqlite.transaction((inputs: readonly PageInput[]) => inputs.map((input) => this.#writePage(input)));
  }

  /** BEGIN IMMEDIATE: the main thread's connection writes too; wait for the lock, never fail on it. */
  write(input: PageInput): PageResult {
    return this.#write.immediate(input);
  }

  /**
   * Records a new window of a plan (its cursor row) in a transaction of its own. The sync sends it
   * before the window's pages, so it commits before any of them (see MirrorStore.openWindow).
   */
  addWindow(window: { readonly planId: number; readonly windowStart: string; readonly windowEnd: string }): void {
    this.#sqlite.transaction(() => this.#addWindow.run(window.planId, window.windowStart, window.windowEnd)).immediate();
  }

  /**
   * Pages that waited together, in one transaction (group commit), each with its own checkpoint:
   * fewer commits write fewer WAL frames, as the pages' shared B-tree pages are written once.
   * Pages of one window arrive in order; a crash keeps a prefix of them, so a window's cursor only
   * moves forward over pages that are written.
   *
   * If the batch fails, each page is tried alone, so one bad page fails only its own window. A
   * window with a failed page writes none of its later pages in this run: its checkpoint would
   * otherwise move past the records that were not written. The next run resumes it from there.
   */
  writeBatch(inputs: readonly PageInput[]): PageOutcome[] {
    if (!inputs.some((input) => this.#failedWindows.has(windowKey(input)))) {
      try {
        return this.#writeMany.immediate(inputs).map((result) => ({ result }));
      } catch {
        // Rolled back as a whole: find the page at fault by writing them one by one.
      }
    }
    return inputs.map((input) => {
      const key = windowKey(input);
      const earlier = this.#failedWindows.get(key);
      if (earlier !== undefined) {
        return { error: new PageNotWrittenError(`an earlier page of window ${input.window.windowStart}..${input.window.windowEnd} was not written (${earlier.message})`, earlier.code) };
      }
      try {
        return { result: this.#write.immediate(input) };
      } catch (error) {
        const failure = error instanceof Error ? error : new Error(String(error));
        this.#failedWindows.set(key, { message: failure.message, code: (failure as { code?: unknown }).code as string | undefined });
        return { error: failure };
      }
    });
  }

  /**
   * Rows written before the lookup columns and the change feed existed (change_seq 0): derive
   * their columns and give each a place in the feed, a batch per transaction.
   */
  backfillLookups(): number {
    const pending = this.#sqlite.prepare('SELECT id, type, content FROM threats WHERE change_seq = 0 LIMIT 1000');
    const update = this.#sqlite.prepare(
      `UPDATE threats SET change_seq = ?, host = ?, registrable_domain = ?, address_namespace = ?, address_chain = ?,
              address = ?, email = ?, email_domain = ?, url_expression = ? WHERE id = ?`,
    );
    const batch = this.#sqlite.transaction(() => {
      const rows = pending.all() as Array<{ id: number; type: string; content: string }>;
      for (const row of rows) {
        const fields = this.#derive(row.type, row.content);
        update.run(++this.#changeSeq, fields.host, fields.registrableDomain, fields.addressNamespace, fields.addressChain, fields.address, fields.email, fields.emailDomain, fields.urlExpression, row.id);
      }
      return rows.length;
    });
    let total = 0;
    for (let done = batch.immediate(); done > 0; done = batch.immediate()) total += done;
    return total;
  }

  #writePage(input: PageInput): PageResult {
    const { stamp } = input;
    // One statement may not upsert the same row twice; a page that repeats an id keeps the last.
    const threats = uniqueById(input.threats);
    // Given in the order of input.threats: used only while the threats are that list itself.
    const lookups = threats === input.threats ? input.lookups : undefined;
    let inserted = 0;
    let updated = 0;
    let offset = 0;
    for (const chunk of chunks(threats)) {
      const values: unknown[] = [];
      for (const threat of chunk) {
        const fields = lookups?.[offset] ?? this.#derive(threat.type, threat.content);
        offset += 1;
        // Each row is offered the next change_seq; it keeps it only if it is written, so the
        // feed may skip numbers but never repeats or goes back.
        this.#changeSeq += 1;
        values.push(
          threat.id, threat.content, threat.type, threat.blockedAt, stamp, stamp, this.#changeSeq,
          fields.host, fields.registrableDomain, fields.addressNamespace, fields.addressChain, fields.address, fields.email, fields.emailDomain,
          fields.urlExpression,
        );
      }
      const links: unknown[] = [];
      for (const threat of chunk) links.push(input.organization, threat.id, stamp);
      if (this.#noneStored(chunk)) {
        // All new (a first backfill's pages, as a rule): inserted without RETURNING, whose rows
        // cost ~1 µs each (measured), and every link needs no feed move: its threat has just
        // been given one.
        this.#statement(this.#inserts, chunk.length, insertSql).run(values);
        inserted += chunk.length;
        this.#statement(this.#newLinks, chunk.length, (rows) => linkSql(rows, false)).run(links);
        continue;
      }
      // A row is returned only when written: first_seen_at equal to this page's stamp means inserted.
      const written = this.#statement(this.#upserts, chunk.length, upsertSql).all(values) as Array<{ id: number; first_seen_at: string }>;
      const writtenIds = new Set<number>();
      for (const row of written) {
        writtenIds.add(row.id);
        if (row.first_seen_at === stamp) inserted += 1;
        else updated += 1;
      }
      // A new or restored link changes what a reader of this organization sees: it moves the feed too.
      const linked = this.#statement(this.#links, chunk.length, (rows) => linkSql(rows, true)).all(links) as Array<{ threat_id: number }>;
      for (const { threat_id: id } of linked) {
        if (!writtenIds.has(id)) this.#bumpChangeSeq.run(++this.#changeSeq, id);
      }
    }
    for (const record of input.rejected) {
      this.#insertRejected.run(input.organization, input.runId, record.raw, record.reason, stamp);
    }
    const windowDone = input.nextPage === null;
    this.#advanceCursor.run(input.nextPage, input.threats.length, windowDone ? stamp : null, input.window.planId, input.window.windowStart);
    const removed = windowDone ? this.#completeWindow(input) : 0;
    const counts = { inserted, updated, rejected: input.rejected.length };
    this.#countRunPage.run(input.retries, inserted, updated, counts.rejected, removed, input.runId);
    return { ...counts, removed };
  }

  /** Marks what the service no longer returns, and records each day of the window in the ledger. */
  #completeWindow(input: PageInput): number {
    const { organization, window, stamp } = input;
    const until = addDays(window.windowEnd, 1);
    const { digests, removedIds } = this.#digestsFromWalk(input, until) ?? this.#digestsFromRows(input, until);
    for (const id of removedIds) {
      this.#markRemoved.run(stamp, organization, id);
      this.#bumpChangeSeq.run(++this.#changeSeq, id);
    }
    const days = daysBetween(window.windowStart, window.windowEnd);
    for (let offset = 0; offset < days; offset += 1) {
      const day = addDays(window.windowStart, offset);
      const digest = digests.get(day) ?? emptyDigest();
      this.#completeDay.run(organization, day, stamp, input.runId, window.windowStart, window.windowEnd, input.windowPages, digest.records, digestHex(digest));
    }
    return removedIds.length;
  }

  /**
   * The walk's own digests, when they are what the rows hold: every id it saw is still stored
   * under these days, and whatever else is there was not returned, so it is removed if it is the
   * organization's. Read from the blocked_at index alone: no row is read or hashed, and a link is
   * looked up only for a threat the walk did not see (joining every row to its link cost ~1.3 µs
   * a row, 1.3 s of a 1,000,000-threat backfill; measured).
   */
  #digestsFromWalk(input: PageInput, until: string): WindowDigests | undefined {
    const { windowSeenIds, windowDigests, organization } = input;
    if (windowSeenIds === null || windowDigests === null) return undefined;
    const removedIds: number[] = [];
    let kept = 0;
    for (const id of this.#threatIdsBetween.iterate(input.window.windowStart, until) as Iterable<number>) {
      if (windowSeenIds.has(id)) kept += 1;
      else if (this.#currentLink.get(organization, id) !== undefined) removedIds.push(id);
    }
    // A record seen but stored under another day since (a later window wrote it again): read back.
    if (kept !== windowSeenIds.size) return undefined;
    return { digests: windowDigests, removedIds };
  }

  /** Reads the window's rows back and hashes them; what a walk from the first page did not see is removed. */
  #digestsFromRows(input: PageInput, until: string): WindowDigests {
    const { windowSeenIds } = input;
    const digests = new Map<string, DayDigest>();
    const removedIds: number[] = [];
    for (const row of this.#windowThreats.iterate(input.organization, input.window.windowStart, until) as Iterable<DigestedThreat>) {
      if (windowSeenIds !== null && !windowSeenIds.has(row.id)) {
        removedIds.push(row.id);
        continue;
      }
      addToDayDigests(digests, row);
    }
    return { digests, removedIds };
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

const THREAT_COLUMNS = `id, content, type, blocked_at, first_seen_at, updated_at, change_seq,
  host, registrable_domain, address_namespace, address_chain, address, email, email_domain, url_expression`;

function insertSql(rows: number): string {
  return `INSERT INTO threats (${THREAT_COLUMNS}) VALUES ${placeholders(rows, 15)}`;
}

/** Writes only what changed, and returns what it wrote. */
function upsertSql(rows: number): string {
  return `INSERT INTO threats (${THREAT_COLUMNS})
         VALUES ${placeholders(rows, 15)}
         ON CONFLICT (id) DO UPDATE SET content = excluded.content, type = excluded.type, blocked_at = excluded.blocked_at,
           updated_at = excluded.updated_at, change_seq = excluded.change_seq, host = excluded.host,
           registrable_domain = excluded.registrable_domain, address_namespace = excluded.address_namespace,
           address_chain = excluded.address_chain, address = excluded.address, email = excluded.email, email_domain = excluded.email_domain,
           url_expression = excluded.url_expression
         WHERE threats.content IS NOT excluded.content OR threats.type IS NOT excluded.type OR threats.blocked_at IS NOT excluded.blocked_at
         RETURNING id, first_seen_at`;
}

/** New links, and removed ones restored; `returning`: which of them (the others were current already). */
function linkSql(rows: number, returning: boolean): string {
  return `INSERT INTO organization_threats (organization, threat_id, first_seen_at) VALUES ${placeholders(rows, 3)}
         ON CONFLICT DO UPDATE SET removed_at = NULL WHERE removed_at IS NOT NULL${returning ? ' RETURNING threat_id' : ''}`;
}

const CHUNK_SIZES = [100, 10, 1] as const;

/** Splits rows into runs of 100, 10 and 1, the sizes the statements are prepared for. */
function* chunks<T>(rows: readonly T[]): Generator<readonly T[]> {
  let offset = 0;
  for (const size of CHUNK_SIZES) {
    while (rows.length - offset >= size) {
      yield rows.slice(offset, offset + size);
      offset += size;
    }
  }
}

function placeholders(rows: number, columns: number): string {
  const row = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
  return Array.from({ length: rows }, () => row).join(', ');
}

/** A completed window's digest per day, and the threats of its days the walk did not see. */
interface WindowDigests {
  readonly digests: ReadonlyMap<string, DayDigest>;
  readonly removedIds: readonly number[];
}

/** A window as walked by one run: a later run resumes it afresh. */
function windowKey(input: PageInput): string {
  return `${input.runId}/${input.window.planId}/${input.window.windowStart}`;
}

function uniqueById(threats: readonly Threat[]): readonly Threat[] {
  const ids = new Set<number>();
  let duplicate = false;
  for (const threat of threats) {
    if (ids.has(threat.id)) duplicate = true;
    ids.add(threat.id);
  }
  if (!duplicate) return threats;
  return [...new Map(threats.map((threat) => [threat.id, threat])).values()];
}
