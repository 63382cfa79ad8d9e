// The hot path: one page of threats and its window's cursor, in one synchronous transaction, and
// the pages that waited together committed as one (group commit, see commit-queue.ts).
import type { Threat } from '../../records.js';
import type { LookupFields } from '../../url/lookup-fields.js';
import type { DayDigest } from '../content-hash.js';
import { prepareWriteStatements, type WriteStatements } from '../sql/statements.js';
import type { PageOfRun } from '../sql/sync-runs.js';
import type { DeriveLookupFields } from '../sql/threat-rows.js';
import type { Database } from '../sqlite.js';
import { type CarriedConclusion, type OfWindow, type RemovalCandidate, type WindowConclusion, WindowEnds } from './window-end.js';
import { WriteStamps } from './write-stamps.js';

export type { CarriedConclusion, RemovalCandidate, WindowConclusion } from './window-end.js';

export interface PageCounts {
  readonly inserted: number;
  readonly updated: number;
  readonly rejected: number;
}

export interface PageInput extends OfWindow, PageOfRun {
  readonly threats: readonly Threat[];
  readonly nextPage: string | null;
  /** The sender's clock: the page's stamp is this, or just after the previous write's. */
  readonly now: string;
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
  /** Each threat's lookup columns, in order (the client derives them); absent: PageWriterOptions.derive derives them here. */
  readonly lookups?: readonly LookupFields[] | undefined;
  /** Rejected records of the page beyond those in `rejected`: counted in the run (threats_rejected), not kept. */
  readonly rejectedNotKept?: number | undefined;
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

export interface PageWriterOptions {
  /** This connection's write statements, shared with the writer's other parts; prepared here when absent. */
  readonly statements?: WriteStatements | undefined;
  readonly stamps?: WriteStamps | undefined;
  /**
   * The lookup columns of a page sent without them (tests, benchmarks). The writer thread has none:
   * its pages come with their columns, derived by the client, so it never loads the Public Suffix List.
   */
  readonly derive?: DeriveLookupFields | undefined;
}

export class PageWriter {
  readonly #statements: WriteStatements;
  readonly #stamps: WriteStamps;
  readonly #derive: DeriveLookupFields | undefined;
  readonly #windowEnds: WindowEnds;
  readonly #write: (input: PageInput) => PageResult;
  readonly #writeMany: (inputs: readonly PageInput[]) => PageResult[];
  readonly #conclude: (conclusion: WindowConclusion) => PageResult;
  readonly #concludeCarried: (conclusion: CarriedConclusion) => PageResult;
  /** Windows of a run with a page that failed to write, and why (see writeBatch). */
  readonly #failedWindows = new Map<string, { message: string; code: string | undefined }>();

  constructor(sqlite: Database, options: PageWriterOptions = {}) {
    // A multi-row upsert keeps a statement journal (the pages it touched, to undo that statement
    // alone); in memory rather than in a temporary file it costs a copy instead of a write per
    // page: +16% upsert throughput at 1,000,000 threats (measured). Set here, not for every
    // writing connection: a page's statements are small, a migration's index build is not.
    sqlite.pragma('temp_store = MEMORY');
    this.#statements = options.statements ?? prepareWriteStatements(sqlite);
    this.#stamps = options.stamps ?? new WriteStamps();
    this.#derive = options.derive;
    this.#windowEnds = new WindowEnds(sqlite, this.#statements);
    // BEGIN IMMEDIATE: a deferred transaction that met another writer's commit (a replicator's)
    // would fail with SQLITE_BUSY at once instead of waiting its turn (busy_timeout).
    const write = sqlite.transaction((input: PageInput) => this.#writePage(input));
    const writeMany = sqlite.transaction((inputs: readonly PageInput[]) => inputs.map((input) => this.#writePage(input)));
    const conclude = sqlite.transaction((conclusion: WindowConclusion) => this.#writeConclusion(conclusion));
    this.#write = (input) => write.immediate(input);
    this.#writeMany = (inputs) => writeMany.immediate(inputs);
    this.#conclude = (conclusion) => conclude.immediate(conclusion);
    const concludeCarried = sqlite.transaction((conclusion: CarriedConclusion) => this.#writeCarriedConclusion(conclusion));
    this.#concludeCarried = (conclusion) => concludeCarried.immediate(conclusion);
  }

  write(input: PageInput): PageResult {
    return this.#write(input);
  }

  /**
   * What the sync found out about a window's removal candidates: the confirmed removals marked,
   * the threats still listed written, and the window completed or sent back to its first page,
   * in one transaction. The window's last page committed before (its result carried the
   * candidates); a kill between the two walks the window again.
   */
  conclude(conclusion: WindowConclusion): PageResult {
    return this.#conclude(conclusion);
  }

  /** What a later run found out about a window's carried removal checks, in one transaction (window-end.ts). */
  concludeCarried(conclusion: CarriedConclusion): PageResult {
    return this.#concludeCarried(conclusion);
  }

  /**
   * Pages that waited together, in one transaction (group commit), each with its own cursor:
   * fewer commits write fewer WAL frames, as the pages' shared B-tree pages are written once.
   * Pages of one window arrive in order; a crash keeps a prefix of them, so a window's cursor only
   * moves forward over pages that are written.
   *
   * If the batch fails, each page is tried alone, so one bad page fails only its own window. A
   * window with a failed page writes none of its later pages in this run: its cursor would
   * otherwise move past the records that were not written. The next run resumes it from there.
   */
  writeBatch(inputs: readonly PageInput[]): PageOutcome[] {
    if (!inputs.some((input) => this.#failedWindows.has(windowKey(input)))) {
      try {
        return this.#writeMany(inputs).map((result) => ({ result }));
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
        return { result: this.#write(input) };
      } catch (error) {
        const failure = error instanceof Error ? error : new Error(String(error));
        this.#failedWindows.set(key, { message: failure.message, code: (failure as { code?: unknown }).code as string | undefined });
        return { error: failure };
      }
    });
  }

  #writePage(input: PageInput): PageResult {
    const { threats, cursors, runs, rejected } = this.#statements;
    const stamp = this.#stamps.next(input.now);
    const scope = this.#statements.scopes.typesOf(input.organization);
    const { inserted, updated, updatedIds } = threats.write(input.organization, input.threats, this.#lookupsOf(input.threats, input.lookups), stamp, scope);
    this.#joinDays(input.organization, input.window, input.threats, updatedIds);
    rejected.insertAll(input.organization, input.runId, input.rejected, stamp);
    cursors.advance({
      window: input.window,
      nextPage: input.nextPage,
      firstPage: input.requestedPage === null,
      records: input.threats.length,
      lastId: input.threats.at(-1)?.id ?? null,
      walkStartedAt: input.walkStartedAt ?? null,
      runId: input.runId,
    });
    const candidates = input.nextPage === null ? this.#windowEnds.lastPage(input, stamp) : [];
    const counts = { inserted, updated, rejected: input.rejected.length + (input.rejectedNotKept ?? 0) };
    runs.countThreatPage({ runId: input.runId, retries: input.retries, ...counts });
    return candidates.length > 0 ? { ...counts, removed: 0, candidates } : { ...counts, removed: 0 };
  }

  #writeConclusion(conclusion: WindowConclusion): PageResult {
    return this.#writeFoundThen(conclusion, (stamp) => this.#windowEnds.conclude(conclusion, stamp));
  }

  #writeCarriedConclusion(conclusion: CarriedConclusion): PageResult {
    return this.#writeFoundThen(conclusion, (stamp) => this.#windowEnds.concludeCarried(conclusion, stamp));
  }

  /**
   * A conclusion's threats found still listed, written as the service sent them (their days joined
   * to the ledgers that lack them), then `conclude` (the removals and the window's end), counted in its run.
   */
  #writeFoundThen(conclusion: WindowConclusion | CarriedConclusion, conclude: (stamp: string) => number): PageResult {
    const { organization, found, lookups, window, runId } = conclusion;
    const stamp = this.#stamps.next(conclusion.now);
    const { inserted, updated, updatedIds } = this.#statements.threats.write(organization, found, this.#lookupsOf(found, lookups), stamp, this.#statements.scopes.typesOf(organization));
    this.#joinDays(organization, window, found, updatedIds);
    const removed = conclude(stamp);
    this.#statements.runs.countConclusion(runId, { inserted, updated, removed });
    return { inserted, updated, rejected: 0, removed };
  }

  /**
   * Every row has a walk that will look at it again: a threat written on a day outside the window
   * walked (moved there, found there by a check) joins that day to the organization's ledger, and
   * a threat whose row changed joins its day to the ledger of every organization it is current for
   * (another organization's walk may have moved it), as never walked (sql/day-ledger.ts).
   */
  #joinDays(organization: string, window: { readonly windowStart: string; readonly windowEnd: string }, threats: readonly Threat[], updatedIds: readonly number[]): void {
    const { ledger } = this.#statements;
    for (const id of updatedIds) ledger.joinDayOfThreat(id);
    for (const threat of threats) {
      const day = threat.blockedAt.slice(0, 10);
      if (day < window.windowStart || day > window.windowEnd) ledger.joinDay(organization, day);
    }
  }

  #lookupsOf(threats: readonly Threat[], given: readonly LookupFields[] | undefined): readonly LookupFields[] {
    if (given !== undefined) return given;
    const derive = this.#derive;
    if (derive === undefined) throw new Error('a page came without its lookup columns, and this writer derives none: send them with it');
    return threats.map((threat) => derive(threat.type, threat.content));
  }
}

/** A window as walked by one run: a later run resumes it afresh. */
function windowKey(input: PageInput): string {
  return `${input.runId}/${input.window.planId}/${input.window.windowStart}`;
}
