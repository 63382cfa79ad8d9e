// What `threat-mirror status` reports (commands/status.ts), read and put in words: per organization,
// complete_through, unfinished plans, recent runs and row counts; service notices, the allowlist, file sizes.
// Read from a read-only connection: it never writes, so it is safe beside a running daemon.
import { statSync } from 'node:fs';
import { walPathOf } from '../db/database-files.js';
import type { AllowlistStatus } from '../db/read/allowlist-status.js';
import type { ServiceNotice } from '../db/read/notice-reads.js';
import type { Database } from '../db/sqlite.js';
import { type PlanCursorRow, ProgressReads, type ReconciliationRow, type RecentRun, StatusReads, type StatusPlanRow } from '../db/read/status-reads.js';
import { describeHistory, type HistoryProgress, historyProgress } from '../progress/history-progress.js';
import { describeProgress, openPlanProgress, type PlanProgress } from '../progress/plan-progress.js';
import type { OrganizationSync } from '../lookup/sync-judgement.js';

export interface OrganizationStatus {
  readonly organization: string;
  /** Whether the mirror can vouch for it now (the rule of lookup's verdicts and /readyz), and why not. */
  readonly sync: Pick<OrganizationSync, 'state' | 'lastSuccessAt' | 'lastRunStatus' | 'problems'>;
  readonly completeThrough: string | null;
  /** The days it holds whole, and its walk toward THREAT_MIRROR_HISTORY_FROM (progress/history-progress.ts). */
  readonly history: HistoryProgress;
  /** The asset types it mirrors (its scope); null: every type. */
  readonly assetTypes: readonly string[] | null;
  readonly threats: number;
  readonly rejectedRecords: number;
  /** Mirrored days not re-walked within THREAT_MIRROR_RECONCILE_DAYS (sync_status, docs/reconciliation.md). */
  readonly reconciliation: Readonly<ReconciliationRow>;
  /** Each with how far it has come: running (with its rate and ETA) or unfinished (the next run resumes it). */
  readonly openPlans: ReadonlyArray<Omit<StatusPlanRow, 'id'> & { progress: PlanProgress; windows: readonly PlanCursorRow[] }>;
  /** A report run's inserted/updated/rejected are its reports' (JSON field names kept for readers). */
  readonly recentRuns: readonly RecentRun[];
}

const RECENT_RUNS = 5;

/** `organizations` as judged (lookup/sync-judgement.ts); `now`: the rate and ETA of a running run are measured up to it. */
export function readStatus(sqlite: Database, organizations: readonly OrganizationSync[], now: Date): OrganizationStatus[] {
  const reads = new StatusReads(sqlite, RECENT_RUNS);
  const progress = new ProgressReads(sqlite);
  return organizations.map(({ organization, state, lastSuccessAt, lastRunStatus, problems }) => ({
    organization,
    sync: { state, lastSuccessAt, lastRunStatus, problems },
    completeThrough: reads.completeThrough(organization),
    history: historyProgress(reads.history(organization)),
    assetTypes: reads.assetTypes(organization),
    threats: reads.threatCount(organization),
    rejectedRecords: reads.rejectedCount(organization),
    reconciliation: reads.reconciliation(organization) ?? { overdueDays: 0, oldestOverdueDay: null, lastFullCycleAt: null },
    openPlans: reads.openPlans(organization).map(({ id, ...plan }) => ({
      ...plan,
      progress: openPlanProgress(progress, organization, { id, ...plan }, now),
      windows: reads.planCursors(id),
    })),
    recentRuns: reads.recentRuns(organization),
  }));
}

export function formatStatus(statuses: readonly OrganizationStatus[]): string {
  if (statuses.length === 0) return 'No organization has been synced into this file yet.\n';
  const lines: string[] = [];
  for (const status of statuses) {
    lines.push(`${status.organization}`);
    lines.push(`  sync              ${status.sync.problems.length === 0 ? `synced and fresh (last success ${status.sync.lastSuccessAt})` : `cannot vouch: ${status.sync.problems.join('; ')}`}`);
    lines.push(`  complete through  ${status.completeThrough ?? '(not yet)'}`);
    const history = describeHistory(status.history);
    lines.push(`  holds             ${history.holds}`);
    if (history.walk !== null) lines.push(`  history           ${history.walk}`);
    lines.push(`  asset types       ${status.assetTypes?.join(',') ?? 'every type'}`);
    lines.push(`  threats           ${status.threats}`);
    lines.push(`  rejected records  ${status.rejectedRecords}`);
    const { overdueDays, oldestOverdueDay, lastFullCycleAt } = status.reconciliation;
    const overdue = overdueDays === 0 ? 'no day overdue' : `${overdueDays} days overdue, oldest ${oldestOverdueDay}`;
    lines.push(`  reconciliation    ${overdue}; last full cycle ${lastFullCycleAt ?? '(none yet)'}`);
    for (const plan of status.openPlans) {
      const open = plan.windows.filter((window) => window.completedAt === null);
      // A widened scope's walk of the types it added, over the days already mirrored.
      const widening = plan.widening === null ? '' : plan.widening === '*' ? ' of every type (the scope widened)' : ` of the added types ${plan.widening}`;
      lines.push(`  ${plan.progress.state} ${plan.mode}${widening} ${plan.rangeStart}..${plan.rangeEnd}: ${describeProgress(plan.progress)}; ${open.length} of ${plan.windows.length} windows open`);
      for (const window of open) {
        lines.push(`    ${window.windowStart}..${window.windowEnd}  ${window.pages} pages done, next page ${window.nextPage ?? '(first)'}`);
      }
    }
    lines.push('  recent runs:');
    if (status.recentRuns.length === 0) lines.push('    (none)');
    for (const run of status.recentRuns) {
      const counts = `${run.pages} pages, +${run.threatsInserted} new, ${run.threatsUpdated} changed, ${run.threatsRejected} rejected`;
      lines.push(`    #${run.id} ${run.stream} ${run.mode} ${run.rangeStart}..${run.rangeEnd} ${run.status} at ${run.finishedAt ?? run.startedAt}: ${counts}${run.error ? `; ${run.error}` : ''}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export function formatServiceNotices(notices: readonly ServiceNotice[]): string {
  if (notices.length === 0) return '';
  const lines = ['service notices:'];
  for (const notice of notices) {
    lines.push(`  ${notice.endpoint} deprecated (Deprecation: ${notice.deprecation ?? '(none)'}; Sunset: ${notice.sunset ?? '(none)'}), recorded ${notice.seenAt}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The file's and its WAL's sizes: a WAL that keeps growing means a reader holds a read transaction. */
export interface FileSizes {
  readonly databaseBytes: number;
  readonly walBytes: number;
}

export function formatAllowlistStatus(status: AllowlistStatus | null): string {
  if (status === null) return 'allowlist: none (THREAT_MIRROR_ALLOWLIST unset for the last writer)\n';
  return `allowlist: ${status.entries} ${status.entries === 1 ? 'entry' : 'entries'} from ${status.file}, applied ${status.appliedAt ?? '(unknown)'}\n`;
}

export function readFileSizes(dbPath: string): FileSizes {
  const size = (path: string): number => {
    try {
      return statSync(path).size;
    } catch {
      return 0;
    }
  };
  return { databaseBytes: size(dbPath), walBytes: size(walPathOf(dbPath)) };
}

export function formatFileSizes(files: FileSizes): string {
  return `database ${files.databaseBytes} bytes, WAL ${files.walBytes} bytes\n`;
}
