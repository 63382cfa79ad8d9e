// The end of a window's walk, on the writer's connection: which threats of its days the walk did
// not return (candidates for removal, handed back to the sync to confirm), and, once nothing is
// left to confirm, the window's completion: its days enter the ledger (docs/reconciliation.md).
//
// Nothing is marked removed here from a walk alone: absence from a walk during which the list may
// have shifted is no proof. The sync confirms each candidate with the service first and sends the
// outcome back (WindowConclusion); only then does a threat get its removed_at.
import { addDays } from '../../lib/days.js';
import type { Threat } from '../../records.js';
import type { LookupFields } from '../../url/lookup-fields.js';
import { addToDayDigests, type DayDigest } from '../content-hash.js';
import { CURRENT_LINK_SQL, type OwnedThreat, ownTypeIn, THREAT_IDS_BETWEEN_SQL, WINDOW_THREATS_SQL } from '../read/ledger-reads.js';
import type { DayLedgerRows } from '../sql/day-ledger.js';
import type { RemovalCheckRows } from '../sql/removal-checks.js';
import { storedScope } from '../sql/scopes.js';
import type { OfRun } from '../sql/sync-runs.js';
import type { ThreatRows } from '../sql/threat-rows.js';
import type { WindowCursors, WindowRef } from '../sql/window-cursors.js';
import { type Database, prepareAll, type Statements } from '../sqlite.js';

export type { WindowRef } from '../sql/window-cursors.js';

/** A write about one window of a run. */
export interface OfWindow extends OfRun {
  readonly window: WindowRef;
  /** Pages of the window so far (recorded in the ledger). */
  readonly windowPages: number;
  /**
   * The asset types the walk asked for (the organization's scope); undefined: every type. Stored
   * threats of other types are neither removal candidates nor part of the days' digests: the walk
   * says nothing about them.
   */
  readonly assetTypes?: readonly string[] | undefined;
}

/** What the writer needs of a window's last page to end the walk. */
export interface LastPage extends OfWindow {
  /**
   * Every id the walk returned, or null when it cannot say (a caller that does not track them):
   * then no candidate is looked for. With `windowSeenAbove`, only the ids above it: an earlier
   * process walked the pages up to it, and what it saw is not known here.
   */
  readonly windowSeenIds: ReadonlySet<number> | null;
  readonly windowSeenAbove?: number | null | undefined;
  /** Each day's digest of the records as received (see PageInput); used only for a walk seen whole. */
  readonly windowDigests: ReadonlyMap<string, DayDigest> | null;
}

/** A stored threat of the window's days that the walk did not return: the sync asks the service about it. */
export type RemovalCandidate = Threat;

/** What the sync found out about a window's candidates, sent back to the writer. */
export interface WindowConclusion extends OfWindow {
  /** Confirmed: the service lists them nowhere. Marked removed. */
  readonly removedIds: readonly number[];
  /** Still listed (moved to another day, changed, or blocked again): written as the service sent them. */
  readonly found: readonly Threat[];
  /** Each found threat's lookup columns, in order, when the sender derived them. */
  readonly lookups?: readonly LookupFields[] | undefined;
  /**
   * true: every candidate was settled and the walk held; the window is complete and its days enter
   * the ledger. false: the walk missed a threat the list held, or a check could not settle: the
   * window is walked again from its first page, and its days keep their old ledger rows.
   */
  readonly complete: boolean;
  /**
   * Candidates whose checks the run's request allowance did not cover (a reconciliation): kept in
   * removal_checks and checked first by the next run; the window waits for them, unwalked.
   */
  readonly carried?: readonly number[] | undefined;
  /** The sender's clock: the write's stamp is this, or just after the previous write's. */
  readonly now: string;
}

/** What a later run found out about a window's carried checks (docs/reconciliation.md, "Checks carried over"). */
export interface CarriedConclusion extends OfRun {
  readonly window: { readonly windowStart: string; readonly windowEnd: string };
  readonly windowPages: number;
  /** The types the window's walk asked for; undefined: every type. */
  readonly assetTypes?: readonly string[] | undefined;
  readonly removedIds: readonly number[];
  readonly found: readonly Threat[];
  readonly lookups?: readonly LookupFields[] | undefined;
  /** Checks settled, whatever the answer (their rows go): the removed, the found, those that could not tell, those a walk settled since. */
  readonly settledIds: readonly number[];
  readonly now: string;
}

/** The statements of this connection the window's end writes with. */
export interface WindowEndWrites {
  readonly threats: ThreatRows;
  readonly cursors: WindowCursors;
  readonly ledger: DayLedgerRows;
  readonly checks: RemovalCheckRows;
}

const READ_SQL = {
  threatIdsBetween: THREAT_IDS_BETWEEN_SQL,
  currentLink: CURRENT_LINK_SQL,
  windowThreats: WINDOW_THREATS_SQL,
  threatById: 'SELECT id, content, type, blocked_at AS blockedAt FROM threats WHERE id = ?',
  planWidening: 'SELECT widening FROM sync_plans WHERE id = ?',
  carryingWalk: `SELECT walked_run_id AS runId, coalesce(walked_at, carried_at) AS walkedAt FROM removal_checks
                  WHERE organization = ? AND window_start = ? AND window_end = ? LIMIT 1`,
};

/** The walk whose checks a window's carried rows are: its days are as fresh as its first page. */
interface CarryingWalk {
  readonly runId: number | null;
  readonly walkedAt: string;
}

export class WindowEnds {
  readonly #writes: WindowEndWrites;
  readonly #read: Statements<keyof typeof READ_SQL>;

  constructor(sqlite: Database, writes: WindowEndWrites) {
    this.#writes = writes;
    this.#read = prepareAll(sqlite, READ_SQL);
    this.#read.threatIdsBetween.pluck();
    this.#read.currentLink.pluck();
    this.#read.planWidening.pluck();
  }

  /**
   * The walk reached the window's last page (written just before, in this transaction). Without
   * candidates the window completes here: the hot path. The window's ids are read from the
   * blocked_at index alone, and a link is looked up only for an id the walk did not see (joining
   * every row to its link cost ~1.3 µs a row, 1.3 s of a 1,000,000-threat backfill; measured).
   * With candidates it stays open (cursor back at the first page, so a kill walks it again) and
   * they go back to the sync.
   */
  lastPage(input: LastPage, stamp: string): readonly RemovalCandidate[] {
    const { windowSeenIds: seen, organization, window } = input;
    const above = input.windowSeenAbove ?? null;
    const candidates: RemovalCandidate[] = [];
    const inScope = ownTypeIn(input.assetTypes);
    let kept = 0;
    if (seen !== null) {
      for (const id of this.#read.threatIdsBetween.iterate(window.windowStart, addDays(window.windowEnd, 1)) as Iterable<number>) {
        if (seen.has(id)) kept += 1;
        else if (above === null || id > above) {
          // The organization's own link decides, whatever another organization's walk wrote of the threat.
          const ownType = this.#read.currentLink.get(organization, id) as string | undefined;
          if (ownType === undefined) continue;
          const candidate = this.#read.threatById.get(id) as RemovalCandidate;
          if (inScope({ ownType: ownType === '' ? candidate.type : ownType })) candidates.push(candidate);
        }
      }
    }
    if (candidates.length > 0) return candidates;
    // The walk's digests are the rows' only when it saw the window whole and every id it saw is
    // still stored under these days (a later window may have written one again under another).
    const exact = seen !== null && above === null && input.windowDigests !== null && kept === seen.size;
    this.#complete(input, stamp, exact ? (input.windowDigests as ReadonlyMap<string, DayDigest>) : this.#digestsFromRows(input));
    return [];
  }

  /** Marks the confirmed removals, and completes the window or sends it back to its first page. Returns the threats marked. */
  conclude(conclusion: WindowConclusion, stamp: string): number {
    const { organization, window } = conclusion;
    let removed = 0;
    for (const id of conclusion.removedIds) {
      if (this.#writes.threats.markRemoved(organization, id, stamp)) removed += 1;
    }
    if (conclusion.complete) {
      this.#complete(conclusion, stamp, this.#digestsFromRows(conclusion));
      return removed;
    }
    const carried = conclusion.carried ?? [];
    if (carried.length > 0) {
      // Once settled, the days enter the ledger as read by this walk, when it began (#complete).
      const begun = this.#writes.cursors.begun(window);
      const { windowStart, windowEnd } = window;
      const walked = { walkedRunId: begun.startedRunId ?? conclusion.runId, walkedAt: begun.startedAt ?? stamp };
      this.#writes.checks.carry({ organization, windowStart, windowEnd, windowPages: conclusion.windowPages, assetTypes: storedScope(conclusion.assetTypes), ...walked }, carried, stamp);
    }
    this.#writes.cursors.restart(window);
    return removed;
  }

  /**
   * Settles carried checks: the confirmed removals marked, their rows gone, and once none is left
   * for the window, its days enter the ledger as walked whole: by the walk that carried them, when
   * it began (what its pages are as fresh as, however long the checks waited). Returns the threats marked.
   */
  concludeCarried(conclusion: CarriedConclusion, stamp: string): number {
    const { organization, runId, window, windowPages, assetTypes } = conclusion;
    let removed = 0;
    for (const id of conclusion.removedIds) {
      if (this.#writes.threats.markRemoved(organization, id, stamp)) removed += 1;
    }
    // The walk that carried them, read before its last check's row goes (rows of older versions: the carrying time).
    const walk = this.#read.carryingWalk.get(organization, window.windowStart, window.windowEnd) as CarryingWalk | undefined;
    this.#writes.checks.settle(organization, conclusion.settledIds);
    if (this.#writes.checks.pendingIn({ organization, ...window }) === 0) {
      const digests = this.#digestsFromRows({ organization, runId, window: { planId: 0, ...window }, windowPages, assetTypes });
      const walked = { runId: walk?.runId ?? runId, completedAt: walk?.walkedAt ?? stamp };
      this.#writes.ledger.recordWindow({ organization, ...window, windowPages, assetTypes: storedScope(assetTypes), ...walked }, digests);
    }
    return removed;
  }

  #complete(input: OfWindow, stamp: string, digests: ReadonlyMap<string, DayDigest>): void {
    const { organization, runId, window, windowPages } = input;
    // The days are as fresh as the walk's first page: a walk resumed from a cursor an earlier run
    // stored read its first pages then, and a change under them since is not in its rows. So the
    // ledger names that run and time, and the reconciliation's rule holds of what the rows are.
    const begun = this.#writes.cursors.complete(window, stamp);
    const assetTypes = storedScope(input.assetTypes);
    const walked = { runId: begun.startedRunId ?? runId, completedAt: begun.startedAt ?? stamp };
    // A widening walked the added types only: a day no walk of the other types covered (a gap
    // the history walk has yet to reach, a day a moved threat joined) stays unwalked for them.
    const widening = (this.#read.planWidening.get(window.planId) ?? null) !== null;
    this.#writes.ledger.recordWindow({ organization, windowStart: window.windowStart, windowEnd: window.windowEnd, windowPages, assetTypes, ...walked }, digests, { walkedOnly: widening });
  }

  /** The organization's current threats of the window's days (of the walk's types), read back and hashed. */
  #digestsFromRows({ organization, window, assetTypes }: OfWindow): Map<string, DayDigest> {
    const digests = new Map<string, DayDigest>();
    const inScope = ownTypeIn(assetTypes);
    for (const row of this.#read.windowThreats.iterate(organization, window.windowStart, addDays(window.windowEnd, 1)) as Iterable<OwnedThreat>) {
      if (inScope(row)) addToDayDigests(digests, row);
    }
    return digests;
  }
}

