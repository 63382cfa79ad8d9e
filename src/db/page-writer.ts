// The hot path: one page of records and the checkpoint after it, in one synchronous transaction.
//
// Raw better-sqlite3 statements rather than drizzle's: per row, drizzle's placeholder mapping cost
// more than SQLite's own work (profiled: 1.9 s of 5.1 s for 200,000 threats). Rows go in
// multi-row statements of 100, 10 and 1 rows, prepared once: a full page is one call, and the
// statement cache stays at three sizes of each (one per partial-page size held ~15 MB more at 1M
// threats). Rows whose ids are all new go in without ON CONFLICT and RETURNING (see #noneStored).
import type Database from 'better-sqlite3';
import type { RejectedRecord, Threat } from '../records.js';
import { deriveLookupFields, type LookupFields } from '../url/lookup-fields.js';
import type { DayDigest } from './content-hash.js';
import { INSERT_REJECTED_RECORD_SQL } from './rejected-records.js';
import { COUNT_THREAT_PAGE_SQL, COUNT_WINDOW_CONCLUSION_SQL } from './run-state.js';
import { chunks, insertSql, linkSql, uniqueById, upsertSql } from './threat-rows-sql.js';
import { type RemovalCandidate, type WindowConclusion, WindowEnds } from './window-end.js';

export type { RemovalCandidate, WindowConclusion } from './window-end.js';

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
   * The cursor this page was asked for with: null for a walk's first page, which starts the
   * window's counts afresh (a window walked again after a shift starts over). Absent: counted on.
   */
  readonly requestedPage?: string | null | undefined;
  /** On a walk's first page: when the walk began, before its first request (sync_cursors.started_at). */
  readonly walkStartedAt?: string | null | undefined;
  /**
   * On a window's last page: every id the walk returned. Threats of the window's days not among
   * them are removal candidates: handed back in the result, never marked here (see window-end.ts).
   * Null when the caller does not track them. For a walk resumed from a cursor, only the ids above
   * `windowSeenAbove` (the last id an earlier process committed): nothing is concluded below it.
   */
  readonly windowSeenIds: ReadonlySet<number> | null;
  readonly windowSeenAbove?: number | null | undefined;
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
  /** Threats marked removed for this organization (by a window's conclusion). */
  readonly removed: number;
  /**
   * On a window's last page: the stored threats of its days the walk did not return. The window
   * stays open until the sync sends their conclusion; empty (or absent) when it completed at once.
   */
  readonly candidates?: readonly RemovalCandidate[];
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
  readonly #countRunPage: Statement;
  readonly #countConclusion: Statement;
  readonly #bumpChangeSeq: Statement;
  readonly #windowEnds: WindowEnds;
  readonly #write: Database.Transaction<(input: PageInput) => PageResult>;
  readonly #conclude: Database.Transaction<(conclusion: WindowConclusion) => PageResult>;
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
    // A walk's first page starts the window's counts, and its start time, afresh.
    this.#advanceCursor = sqlite.prepare(
      `UPDATE sync_cursors SET next_page = :next, completed_at = NULL, pages = CASE WHEN :first THEN 1 ELSE pages + 1 END,
              records = CASE WHEN :first THEN :records ELSE records + :records END,
              last_id = CASE WHEN :last IS NOT NULL THEN :last WHEN :first THEN NULL ELSE last_id END,
              started_at = CASE WHEN :first THEN :started ELSE started_at END
        WHERE plan_id = :plan AND window_start = :window`,
    );
    this.#addWindow = sqlite.prepare('INSERT INTO sync_cursors (plan_id, window_start, window_end) VALUES (?, ?, ?)');
    this.#bumpChangeSeq = sqlite.prepare('UPDATE threats SET change_seq = ? WHERE id = ?');
    this.#anyStoredBetween = sqlite.prepare('SELECT 1 FROM threats WHERE id BETWEEN ? AND ?');
    this.#changeSeq = sqlite.prepare('SELECT coalesce(max(change_seq), 0) FROM threats').pluck().get() as number;
    this.#countRunPage = sqlite.prepare(COUNT_THREAT_PAGE_SQL);
    this.#countConclusion = sqlite.prepare(COUNT_WINDOW_CONCLUSION_SQL);
    this.#windowEnds = new WindowEnds(sqlite, () => ++this.#changeSeq);
    this.#write = sqlite.transaction((input: PageInput) => this.#writePage(input));
    this.#conclude = sqlite.transaction((conclusion: WindowConclusion) => this.#writeConclusion(conclusion));
    this.#writeMany = sqlite.transaction((inputs: readonly PageInput[]) => inputs.map((input) => this.#writePage(input)));
  }

  /** BEGIN IMMEDIATE: the main thread's connection writes too; wait for the lock, never fail on it. */
  write(input: PageInput): PageResult {
    return this.#write.immediate(input);
  }

  /**
   * What the sync found out about a window's removal candidates: the confirmed removals marked,
   * the threats still listed written, and the window completed or sent back to its first page,
   * in one transaction. The window's last page committed before (its result carried the
   * candidates); a kill between the two walks the window again.
   */
  conclude(conclusion: WindowConclusion): PageResult {
    return this.#conclude.immediate(conclusion);
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
    const { inserted, updated } = this.#writeThreats(input.organization, input.threats, input.lookups, input.stamp);
    for (const record of input.rejected) {
      this.#insertRejected.run(input.organization, input.runId, record.raw, record.reason, input.stamp);
    }
    const first = input.requestedPage === null;
    this.#advanceCursor.run({
      next: input.nextPage,
      first: first ? 1 : 0,
      records: input.threats.length,
      last: input.threats.at(-1)?.id ?? null,
      started: input.walkStartedAt ?? null,
      plan: input.window.planId,
      window: input.window.windowStart,
    });
    const candidates = input.nextPage === null ? this.#windowEnds.lastPage(input) : [];
    const counts = { inserted, updated, rejected: input.rejected.length };
    this.#countRunPage.run(input.retries, inserted, updated, counts.rejected, 0, input.runId);
    return candidates.length > 0 ? { ...counts, removed: 0, candidates } : { ...counts, removed: 0 };
  }

  #writeConclusion(conclusion: WindowConclusion): PageResult {
    const { inserted, updated } = this.#writeThreats(conclusion.organization, conclusion.found, conclusion.lookups, conclusion.stamp);
    const removed = this.#windowEnds.conclude(conclusion);
    this.#countConclusion.run(inserted, updated, removed, conclusion.runId);
    return { inserted, updated, rejected: 0, removed };
  }

  /** Writes what changed of these threats and links them to the organization; counts the rows inserted and updated. */
  #writeThreats(organization: string, all: readonly Threat[], given: readonly LookupFields[] | undefined, stamp: string): { inserted: number; updated: number } {
    // One statement may not upsert the same row twice; a page that repeats an id keeps the last.
    const threats = uniqueById(all);
    // Given in the order of the threats: used only while the threats are that list itself.
    const lookups = threats === all ? given : undefined;
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
      for (const threat of chunk) links.push(organization, threat.id, stamp);
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
    return { inserted, updated };
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

/** A window as walked by one run: a later run resumes it afresh. */
function windowKey(input: PageInput): string {
  return `${input.runId}/${input.window.planId}/${input.window.windowStart}`;
}
