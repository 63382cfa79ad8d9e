// `threat-mirror status`: per organization, the checkpoint, unfinished plans, recent runs and row counts.
// Opens the file read-only: it never writes, so it is safe beside a running daemon.
import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';

export interface OrganizationStatus {
  readonly organization: string;
  readonly completeThrough: string | null;
  readonly threats: number;
  readonly rejectedRecords: number;
  readonly openPlans: ReadonlyArray<{
    mode: string;
    rangeStart: string;
    rangeEnd: string;
    windows: ReadonlyArray<{ windowStart: string; windowEnd: string; nextPage: string | null; pages: number; records: number; completedAt: string | null }>;
  }>;
  readonly recentRuns: ReadonlyArray<{
    id: number;
    stream: string;
    mode: string;
    status: string;
    rangeStart: string;
    rangeEnd: string;
    startedAt: string;
    finishedAt: string | null;
    pages: number;
    threatsInserted: number;
    threatsUpdated: number;
    threatsRejected: number;
    error: string | null;
  }>;
}

const RECENT_RUNS = 5;

export function readStatus(sqlite: Database.Database, only?: string): OrganizationStatus[] {
  const organizations = (
    sqlite
      .prepare('SELECT organization FROM sync_runs UNION SELECT organization FROM sync_checkpoints UNION SELECT organization FROM organization_threats ORDER BY 1')
      .pluck()
      .all() as string[]
  ).filter((name) => only === undefined || name === only);
  const checkpoint = sqlite.prepare('SELECT complete_through FROM sync_checkpoints WHERE organization = ?').pluck();
  const threats = sqlite.prepare('SELECT count(*) FROM organization_threats WHERE organization = ?').pluck();
  const rejected = sqlite.prepare('SELECT count(*) FROM rejected_records WHERE organization = ?').pluck();
  const plans = sqlite.prepare('SELECT id, mode, range_start AS rangeStart, range_end AS rangeEnd FROM sync_plans WHERE organization = ? ORDER BY id');
  const windows = sqlite.prepare(
    'SELECT window_start AS windowStart, window_end AS windowEnd, next_page AS nextPage, pages, records, completed_at AS completedAt FROM sync_cursors WHERE plan_id = ? ORDER BY window_start',
  );
  const runs = sqlite.prepare(
    `SELECT id, stream, mode, status, range_start AS rangeStart, range_end AS rangeEnd, started_at AS startedAt, finished_at AS finishedAt, pages,
            threats_inserted AS threatsInserted, threats_updated AS threatsUpdated, threats_rejected AS threatsRejected, error
       FROM sync_runs WHERE organization = ? ORDER BY id DESC LIMIT ${RECENT_RUNS}`,
  );
  return organizations.map((organization) => ({
    organization,
    completeThrough: (checkpoint.get(organization) as string | undefined) ?? null,
    threats: threats.get(organization) as number,
    rejectedRecords: rejected.get(organization) as number,
    openPlans: (plans.all(organization) as Array<{ id: number; mode: string; rangeStart: string; rangeEnd: string }>).map(({ id, ...plan }) => ({
      ...plan,
      windows: windows.all(id) as OrganizationStatus['openPlans'][number]['windows'],
    })),
    recentRuns: runs.all(organization) as OrganizationStatus['recentRuns'],
  }));
}

export function formatStatus(statuses: readonly OrganizationStatus[]): string {
  if (statuses.length === 0) return 'No organization has been synced into this file yet.\n';
  const lines: string[] = [];
  for (const status of statuses) {
    lines.push(`${status.organization}`);
    lines.push(`  complete through  ${status.completeThrough ?? '(not yet)'}`);
    lines.push(`  threats           ${status.threats}`);
    lines.push(`  rejected records  ${status.rejectedRecords}`);
    for (const plan of status.openPlans) {
      const open = plan.windows.filter((window) => window.completedAt === null);
      lines.push(`  unfinished ${plan.mode} ${plan.rangeStart}..${plan.rangeEnd}: ${open.length} of ${plan.windows.length} windows left`);
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

/** The file's and its WAL's sizes: a WAL that keeps growing means a reader holds a read transaction. */
export interface FileSizes {
  readonly databaseBytes: number;
  readonly walBytes: number;
}

export function readFileSizes(dbPath: string): FileSizes {
  const size = (path: string): number => {
    try {
      return statSync(path).size;
    } catch {
      return 0;
    }
  };
  return { databaseBytes: size(dbPath), walBytes: size(`${dbPath}-wal`) };
}

export function formatFileSizes(files: FileSizes): string {
  return `database ${files.databaseBytes} bytes, WAL ${files.walBytes} bytes\n`;
}
