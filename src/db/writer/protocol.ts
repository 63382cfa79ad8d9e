// What the main thread and the writer thread say to each other: every kind of write is a call with
// one input and one answer (WriterCalls). A new kind of write is a line here, a handler in
// mirror-writer.ts (whose type makes it required) and its SQL in ../sql/.
import type { Plan } from '../read/plan-reads.js';
import type { MirroredAllowlist } from '../sql/allowlist-rows.js';
import type { ObservedSize } from '../sql/day-ledger.js';
import type { NewPlan, PlanSelection } from '../sql/plans.js';
import type { RunEnd, RunStart } from '../sql/sync-runs.js';
import type { WindowRef } from '../sql/window-cursors.js';
import type { LookupRulesUpgrade } from './lookup-rules-upgrade.js';
import type { PageInput, PageResult } from './page-writer.js';
import type { AppliedScope, ScopeToApply } from './scope-change.js';
import type { ConfiguredOrganizations, OrganizationsToConfigure } from './configured-organizations.js';
import type { FinishedReportWalk, ReportPageInput, ReportPageResult, ReportsDisabled } from './report-pages.js';
import type { WalCheckpoint } from './wal-checkpoint.js';
import type { WalSwitch } from './writer-pragmas.js';
import type { CarriedConclusion, WindowConclusion } from './window-end.js';

// The shapes of the calls' inputs, for the callers: they need not know the SQL modules.
export type { MirroredAllowlist } from '../sql/allowlist-rows.js';
export type { ReportCoverage } from '../sql/reports.js';
export type { WindowRef } from '../sql/window-cursors.js';

/** The sender's clock: a write's stamp is this, or just after the previous write's (write-stamps.ts). */
export interface Sent {
  readonly now: string;
}

/** A finished plan: deleted with its windows, and complete_through moved, in one transaction. */
export interface PlanEnd {
  readonly planId: number;
  /** The day every day of the plan is mirrored through; null leaves complete_through as it is. */
  readonly completeThrough: { readonly organization: string; readonly day: string } | null;
  readonly now: string;
}

export interface Setting {
  readonly key: string;
  readonly value: string;
  readonly now: string;
}

/** Every call the writer answers: what it is sent, and what it answers with. */
export interface WriterCalls {
  /** A page of threats and its window's cursor: answered once its group commit is done. */
  readonly page: { readonly input: PageInput; readonly result: PageResult };
  /** What the sync found out about a window's removal candidates. */
  readonly conclusion: { readonly input: WindowConclusion; readonly result: PageResult };
  /** What a later run found out about a window's carried removal checks. */
  readonly carriedConclusion: { readonly input: CarriedConclusion; readonly result: PageResult };
  /** A new window of a plan, recorded before any of its pages (they are sent after it). */
  readonly openWindow: { readonly input: WindowRef; readonly result: void };
  /** A reconciliation plans all its windows before it walks them. */
  readonly addWindows: { readonly input: { readonly windows: readonly WindowRef[] }; readonly result: void };
  readonly startRun: { readonly input: RunStart; readonly result: number };
  readonly finishRun: { readonly input: RunEnd; readonly result: void };
  readonly createPlan: { readonly input: NewPlan; readonly result: Plan };
  readonly extendPlan: { readonly input: { readonly plan: Plan; readonly rangeEnd: string }; readonly result: Plan };
  readonly finishPlan: { readonly input: PlanEnd; readonly result: void };
  /** Answers how many plans it deleted. */
  readonly deletePlans: { readonly input: PlanSelection; readonly result: number };
  readonly recordSetting: { readonly input: Setting; readonly result: void };
  readonly reportPage: { readonly input: ReportPageInput & Sent; readonly result: ReportPageResult };
  /** Answers how many reports it marked removed. */
  readonly finishReportWalk: { readonly input: FinishedReportWalk & Sent; readonly result: number };
  readonly disableReports: { readonly input: ReportsDisabled & Sent; readonly result: void };
  /** Answers how many proposals it linked to a mirrored threat. */
  readonly linkReportThreats: { readonly input: { readonly organization: string }; readonly result: number };
  readonly recordObservedSize: { readonly input: ObservedSize; readonly result: { readonly before: number; readonly after: number } };
  /** An organization's asset type scope, before its run: recorded, threats hidden or shown, a widening planned. */
  readonly applyScope: { readonly input: ScopeToApply; readonly result: AppliedScope };
  /** The configured organizations, at the start: those left out retired (hidden, kept), those configured again shown. */
  readonly configureOrganizations: { readonly input: OrganizationsToConfigure; readonly result: ConfiguredOrganizations };
  readonly recordReconcileCycle: { readonly input: { readonly organization: string; readonly at: string }; readonly result: void };
  /** THREAT_MIRROR_ALLOWLIST into the table allowlist (null: none configured, emptied); answers whether it wrote. */
  readonly mirrorAllowlist: { readonly input: { readonly list: MirroredAllowlist | null; readonly now: string }; readonly result: boolean };
  /** Folds the WAL into the file after the pages sent before it; never waits for a reader. */
  readonly checkpointWal: { readonly input: Record<string, never>; readonly result: WalCheckpoint };
}

export type WriterCallKind = keyof WriterCalls;
export type CallInput<K extends WriterCallKind> = WriterCalls[K]['input'];
export type CallResult<K extends WriterCallKind> = WriterCalls[K]['result'];

/** A call as posted: `sentAt` (epoch ms, the same clock in every thread) lets the commit queue see how long a page waited. */
export type WriterRequest =
  | { [K in WriterCallKind]: { readonly id: number; readonly kind: K; readonly input: CallInput<K>; readonly sentAt: number } }[WriterCallKind]
  | { readonly id: number; readonly kind: 'close'; readonly sentAt: number };

export type WriterResponse = { readonly id: number; readonly result?: unknown; readonly error?: { readonly message: string; readonly code?: string } };

/** id 0 answers the start: ready (a WriterStart), or why the thread could not open the database. */
export const START_ID = 0;

/** What the thread did before it took calls. */
export interface WriterStart {
  /** Runs a process that died left marked running, now marked interrupted. */
  readonly abandonedRuns: number;
  /** Old rows given lookup columns (and a place in the change feed). */
  readonly backfilled: number;
  /** Rows derived again under newer lookup rules (url/lookup-rules.ts); null when none needed it. */
  readonly lookupRules: LookupRulesUpgrade | null;
  /** Lookup indexes left to build at the end (the mirror was empty: see sql/deferred-indexes.ts). */
  readonly deferredIndexes: number;
  /** The file was not at rest in WAL mode and was switched to it, waiting this long for other connections (writer-pragmas.ts). */
  readonly walSwitch: WalSwitch | null;
}

export interface WriterThreadData {
  readonly dbPath: string;
  /** False when a replicator (Litestream) does the checkpoints: see THREAT_MIRROR_CHECKPOINTS. */
  readonly autoCheckpoint: boolean;
  /** The start's clock (THREAT_MIRROR_NOW): when abandoned runs are marked interrupted. */
  readonly now: string;
  /** The last stamp (epoch ms) of the thread this one follows in the same process: stamps stay strictly later. */
  readonly stampsAfterMs?: number;
}

/** What a close answers: the last write's stamp, for the thread that follows (WriterClient.suspend). */
export interface WriterClosed {
  readonly lastStampMs: number;
}
