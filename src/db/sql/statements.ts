// The write statements of one connection, prepared once: every module of this folder, shared by the
// writer's parts so that, for one, the change feed has a single counter.
import type { Database } from '../sqlite.js';
import { AllowlistRows } from './allowlist-rows.js';
import { DayLedgerRows } from './day-ledger.js';
import { PlanRows } from './plans.js';
import { ReconcileState } from './reconcile-state.js';
import { RejectedRecords } from './rejected-records.js';
import { RemovalCheckRows } from './removal-checks.js';
import { ScopeRows } from './scopes.js';
import { ReportRows } from './reports.js';
import { MirrorSettings } from './settings.js';
import { SyncRuns } from './sync-runs.js';
import { ThreatRows } from './threat-rows.js';
import { WindowCursors } from './window-cursors.js';

export interface WriteStatements {
  readonly threats: ThreatRows;
  readonly cursors: WindowCursors;
  readonly plans: PlanRows;
  readonly runs: SyncRuns;
  readonly rejected: RejectedRecords;
  readonly ledger: DayLedgerRows;
  readonly checks: RemovalCheckRows;
  readonly reconcile: ReconcileState;
  readonly reports: ReportRows;
  readonly settings: MirrorSettings;
  readonly scopes: ScopeRows;
  readonly allowlist: AllowlistRows;
}

export function prepareWriteStatements(sqlite: Database): WriteStatements {
  const cursors = new WindowCursors(sqlite);
  const threats = new ThreatRows(sqlite);
  const settings = new MirrorSettings(sqlite);
  const ledger = new DayLedgerRows(sqlite);
  return {
    threats,
    cursors,
    plans: new PlanRows(sqlite, cursors, ledger),
    runs: new SyncRuns(sqlite),
    rejected: new RejectedRecords(sqlite),
    ledger,
    checks: new RemovalCheckRows(sqlite),
    reconcile: new ReconcileState(sqlite),
    reports: new ReportRows(sqlite),
    settings,
    allowlist: new AllowlistRows(sqlite, settings),
    scopes: new ScopeRows(sqlite, threats),
  };
}
