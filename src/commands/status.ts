// `threat-mirror status`: per organization, the checkpoint, unfinished plans, recent runs and row counts.
// Opens the file read-only: it never writes, so it is safe beside a running daemon.
import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';

export interface OrganizationStatus {
  readonly organization: string;
  readonly completeThrough: string | null;
  readonly threats: number;
  readonly rejectedRecords: number;
  /** Mirrored days not re-walked within THREAT_MIRROR_RECONCILE_DAYS (sync_status, docs/reconciliation.md). */
  readonly reconciliation: { readonly overdueDays: number; readonly oldestOverdueDay: string | null; readonly lastFullCycleAt: string | null };
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
  const reconciliation = prepareIfMigrated(
    sqlite,
    'SELECT overdue_days AS overdueDays, oldest_overdue_day AS oldestOverdueDay, last_full_reconcile_at AS lastFullCycleAt FROM sync_status WHERE organization = ?',
  );
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
    reconciliation: (reconciliation?.get(organization) as OrganizationStatus['reconciliation'] | undefined) ?? { overdueDays: 0, oldestOverdueDay: null, lastFullCycleAt: null },
    openPlans: (plans.all(organization) as Array<{ id: number; mode: string; rangeStart: string; rangeEnd: string }>).map(({ id, ...plan }) => ({
      ...plan,
      windows: windows.all(id) as OrganizationStatus['openPlans'][number]['windows'],
    })),
    recentRuns: runs.all(organization) as OrganizationStatus['recentRuns'],
  }));
}

/** A file the writer of this version has not migrated yet lacks the newer columns: show none. */
function prepareIfMigrated(sqlite: Database.Database, query: string): Database.Statement | undefined {
  try {
    return sqlite.prepare(query);
  } catch {
    return undefined;
  }
}

export function formatStatus(statuses: readonly OrganizationStatus[]): string {
  if (statuses.length === 0) return 'No organization has been synced into this file yet.\n';
  const lines: string[] = [];
  for (const status of statuses) {
    lines.push(`${status.organization}`);
    lines.push(`  complete through  ${status.completeThrough ?? '(not yet)'}`);
    lines.push(`  threats           ${status.threats}`);
    lines.push(`  rejected records  ${status.rejectedRecords}`);
    const { overdueDays, oldestOverdueDay, lastFullCycleAt } = status.reconciliation;
    const overdue = overdueDays === 0 ? 'no day overdue' : `${overdueDays} days overdue, oldest ${oldestOverdueDay}`;
    lines.push(`  reconciliation    ${overdue}; last full cycle ${lastFullCycleAt ?? '(none yet)'}`);
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

/** A deprecation the service announced (Deprecation / Sunset headers, RFC 8594), per endpoint. */
export interface ServiceNotice {
  readonly endpoint: string;
  readonly deprecation: string | null;
  readonly sunset: string | null;
  /** When a process last recorded these values: its first response carrying them, or a change. */
  readonly seenAt: string;
}

/** Key prefix of the notices in mirror_settings; the rest of the key is the endpoint. */
export const DEPRECATION_SETTING_PREFIX = 'deprecation ';

export function readServiceNotices(sqlite: Database.Database): ServiceNotice[] {
  const rows = sqlite
    .prepare("SELECT key, value, updated_at AS updatedAt FROM mirror_settings WHERE key >= ? AND key < ? ORDER BY key")
    .all(DEPRECATION_SETTING_PREFIX, `${DEPRECATION_SETTING_PREFIX.trimEnd()}!`) as Array<{ key: string; value: string; updatedAt: string }>;
  return rows.map((row) => {
    let parsed: { deprecation?: unknown; sunset?: unknown } = {};
    try {
      parsed = JSON.parse(row.value) as typeof parsed;
    } catch {
      // written by this program, so always JSON; an edited row shows as empty values
    }
    return {
      endpoint: row.key.slice(DEPRECATION_SETTING_PREFIX.length),
      deprecation: typeof parsed.deprecation === 'string' ? parsed.deprecation : null,
      sunset: typeof parsed.sunset === 'string' ? parsed.sunset : null,
      seenAt: row.updatedAt,
    };
  });
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
