// The reads behind `status`: the SQL of what the mirror says
// about itself, on any connection (read-only included). Each statement is prepared once per call
// site; none writes.
import { keyRangeOf } from '../setting-keys.js';
import { type Database, prepareIfMigrated, type Statement } from '../sqlite.js';

/** A run as `status` lists it; a report run's counts are its reports_* columns. */
export interface RecentRun {
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
}

export interface OpenPlanRow {
  id: number;
  mode: string;
  rangeStart: string;
  rangeEnd: string;
}

/** An open plan as `status` shows it: a widening of the scope names the types it walks ('*': every type). */
export interface StatusPlanRow extends OpenPlanRow {
  widening: string | null;
}

export interface PlanCursorRow {
  windowStart: string;
  windowEnd: string;
  nextPage: string | null;
  pages: number;
  records: number;
  completedAt: string | null;
}

/** What `status` shows of the history an organization holds and of its walk toward the configured start. */
export interface HistoryRow {
  completeThrough: string | null;
  historyFrom: string | null;
  target: string | null;
  walkStartedAt: string | null;
  heldFromAtStart: string | null;
  /** 1 when the last run found the walk off (THREAT_MIRROR_HISTORY_MAX_REQUESTS=0). */
  walkOff: number | null;
  /** When the last history walk run ended. */
  lastRunAt: string | null;
}

export interface ReconciliationRow {
  overdueDays: number;
  oldestOverdueDay: string | null;
  lastFullCycleAt: string | null;
}

/** A report run's counts are in reports_* (threats_* before migration 0011_report_run_counts). */
function recentRunsSql(limit: number, count: (column: string) => string): string {
  return `SELECT id, stream, mode, status, range_start AS rangeStart, range_end AS rangeEnd, started_at AS startedAt, finished_at AS finishedAt, pages,
            ${count('inserted')} AS threatsInserted, ${count('updated')} AS threatsUpdated, ${count('rejected')} AS threatsRejected, error
       FROM sync_runs WHERE organization = ? ORDER BY id DESC LIMIT ${limit}`;
}

/** What `status` shows of each organization. */
export class StatusReads {
  readonly #completeThrough: Statement;
  readonly #threats: Statement;
  readonly #rejected: Statement;
  readonly #reconciliation: Statement | undefined;
  readonly #scope: Statement | undefined;
  readonly #history: Statement | undefined;
  readonly #plans: Statement;
  readonly #cursors: Statement;
  readonly #recentRuns: Statement;

  constructor(sqlite: Database, recentRuns: number) {
    this.#completeThrough = sqlite.prepare('SELECT complete_through FROM sync_checkpoints WHERE organization = ?').pluck();
    this.#threats = sqlite.prepare('SELECT count(*) FROM organization_threats WHERE organization = ?').pluck();
    this.#rejected = sqlite.prepare('SELECT count(*) FROM rejected_records WHERE organization = ?').pluck();
    this.#reconciliation = prepareIfMigrated(
      sqlite,
      'SELECT overdue_days AS overdueDays, oldest_overdue_day AS oldestOverdueDay, last_full_reconcile_at AS lastFullCycleAt FROM sync_status WHERE organization = ?',
    );
    this.#scope = prepareIfMigrated(sqlite, 'SELECT asset_types FROM organization_scopes WHERE organization = ?');
    this.#history = prepareIfMigrated(
      sqlite,
      `SELECT s.complete_through AS completeThrough, s.history_from AS historyFrom, s.history_target AS target,
              json_extract(m.value, '$.startedAt') AS walkStartedAt, json_extract(m.value, '$.heldFromAtStart') AS heldFromAtStart, json_extract(m.value, '$.off') AS walkOff,
              (SELECT max(finished_at) FROM sync_runs r WHERE r.organization = s.organization AND r.mode = 'history') AS lastRunAt
         FROM sync_status s LEFT JOIN mirror_settings m ON m.key = 'history_walk:' || s.organization
        WHERE s.organization = ?`,
    );
    this.#scope?.pluck();
    // A file from before scopes (migration 0015) has no widening column: none of its plans widens.
    const plans = (widening: string): string => `SELECT id, mode, range_start AS rangeStart, range_end AS rangeEnd, ${widening} AS widening FROM sync_plans WHERE organization = ? ORDER BY id`;
    this.#plans = prepareIfMigrated(sqlite, plans('widening')) ?? sqlite.prepare(plans('NULL'));
    this.#cursors = sqlite.prepare(
      'SELECT window_start AS windowStart, window_end AS windowEnd, next_page AS nextPage, pages, records, completed_at AS completedAt FROM sync_cursors WHERE plan_id = ? ORDER BY window_start',
    );
    this.#recentRuns =
      prepareIfMigrated(sqlite, recentRunsSql(recentRuns, (column) => `CASE stream WHEN 'reports' THEN reports_${column} ELSE threats_${column} END`)) ??
      sqlite.prepare(recentRunsSql(recentRuns, (column) => `threats_${column}`));
  }

  completeThrough(organization: string): string | null {
    return (this.#completeThrough.get(organization) as string | undefined) ?? null;
  }

  threatCount(organization: string): number {
    return this.#threats.get(organization) as number;
  }

  rejectedCount(organization: string): number {
    return this.#rejected.get(organization) as number;
  }

  /** Undefined when the file's writer has not migrated it to sync_status's reconciliation columns. */
  reconciliation(organization: string): ReconciliationRow | undefined {
    return this.#reconciliation?.get(organization) as ReconciliationRow | undefined;
  }

  /** Undefined when the file's writer has not migrated it to sync_status's history columns. */
  history(organization: string): HistoryRow | undefined {
    return this.#history?.get(organization) as HistoryRow | undefined;
  }

  /** The asset types the organization mirrors; null: every type (no scope recorded, or a file not migrated to scopes). */
  assetTypes(organization: string): string[] | null {
    const recorded = this.#scope?.get(organization) as string | null | undefined;
    return recorded === undefined || recorded === null ? null : recorded.split(',');
  }

  openPlans(organization: string): StatusPlanRow[] {
    return this.#plans.all(organization) as StatusPlanRow[];
  }

  planCursors(planId: number): PlanCursorRow[] {
    return this.#cursors.all(planId) as PlanCursorRow[];
  }

  recentRuns(organization: string): RecentRun[] {
    return this.#recentRuns.all(organization) as RecentRun[];
  }
}

/** A threats run as progress reads it: the run that walks an open plan. */
export interface PlanRunRow {
  id: number;
  mode: string;
  status: string;
  rangeStart: string;
  rangeEnd: string;
  startedAt: string;
  /** Pages committed and retries spent so far: the run's requests (failed attempts included). */
  pages: number;
  retries: number;
}

/** How far an open plan's windows are walked. Days are inclusive counts of UTC days. */
export interface PlanWindowsRow {
  windows: number;
  windowsCompleted: number;
  /** Days of the windows the plan has cut so far (a reconciliation cuts all of them at its start). */
  daysPlanned: number;
  daysDone: number;
  /** Days of windows completed at or after the given instant (the run's start). */
  daysDoneSince: number;
  /** Records the service sent for the plan's windows, valid or not, over every run that walked them. */
  records: number;
  /**
   * The open windows' days as far as their pages went: each window's records so far at the density
   * of the completed windows, short of the whole window (its last page is not in yet); 0 before
   * any window completed with records.
   */
  partialDays: number;
}

const WINDOW_DAYS = 'julianday(window_end) - julianday(window_start) + 1';

/**
 * The reads behind progress (status, the progress line and log, the /metrics gauge): small
 * statements on indexed columns, cheap enough to run a few times a second beside a backfill.
 */
export class ProgressReads {
  readonly #latestRun: Statement;
  readonly #run: Statement;
  readonly #planRun: Statement;
  readonly #plan: Statement;
  readonly #windows: Statement;

  constructor(sqlite: Database) {
    const runColumns = 'id, mode, status, range_start AS rangeStart, range_end AS rangeEnd, started_at AS startedAt, pages, retries';
    this.#latestRun = sqlite.prepare(`SELECT ${runColumns} FROM sync_runs WHERE organization = ? AND stream = 'threats' ORDER BY id DESC LIMIT 1`);
    this.#run = sqlite.prepare(`SELECT ${runColumns} FROM sync_runs WHERE id = ?`);
    this.#planRun = sqlite.prepare(
      `SELECT ${runColumns} FROM sync_runs WHERE organization = ? AND stream = 'threats' AND mode = ? AND range_start = ? AND range_end = ? ORDER BY id DESC LIMIT 1`,
    );
    this.#plan = sqlite.prepare(
      'SELECT id, mode, range_start AS rangeStart, range_end AS rangeEnd FROM sync_plans WHERE organization = ? AND mode = ? AND range_start = ? AND range_end = ? ORDER BY id DESC LIMIT 1',
    );
    this.#windows = sqlite.prepare(
      `WITH w AS (SELECT ${WINDOW_DAYS} AS days, records, completed_at FROM sync_cursors WHERE plan_id = @plan),
            done AS (SELECT sum(records) * 1.0 / sum(days) AS density FROM w WHERE completed_at IS NOT NULL AND records > 0)
       SELECT count(*) AS windows, count(completed_at) AS windowsCompleted,
              coalesce(sum(days), 0) AS daysPlanned,
              coalesce(sum(CASE WHEN completed_at IS NOT NULL THEN days END), 0) AS daysDone,
              coalesce(sum(CASE WHEN completed_at >= @since THEN days END), 0) AS daysDoneSince,
              coalesce(sum(records), 0) AS records,
              coalesce(sum(CASE WHEN completed_at IS NULL AND done.density > 0 THEN min(days * 0.9, records / done.density) END), 0) AS partialDays
         FROM w, done`,
    );
  }

  /** The organization's latest threats run (incremental, backfill, verify or reconcile). */
  latestRun(organization: string): PlanRunRow | undefined {
    return this.#latestRun.get(organization) as PlanRunRow | undefined;
  }

  run(id: number): PlanRunRow | undefined {
    return this.#run.get(id) as PlanRunRow | undefined;
  }

  /** The latest run of a plan: same organization, mode and range (a run records its plan's range at its start). */
  runOfPlan(organization: string, plan: Omit<OpenPlanRow, 'id'>): PlanRunRow | undefined {
    return this.#planRun.get(organization, plan.mode, plan.rangeStart, plan.rangeEnd) as PlanRunRow | undefined;
  }

  /** The open plan a run walks; undefined once the run has finished it (finished plans are deleted). */
  planOfRun(organization: string, run: PlanRunRow): OpenPlanRow | undefined {
    return this.#plan.get(organization, run.mode, run.rangeStart, run.rangeEnd) as OpenPlanRow | undefined;
  }

  windows(planId: number, since: string): PlanWindowsRow {
    return this.#windows.get({ since, plan: planId }) as PlanWindowsRow;
  }
}

/** mirror_settings rows whose key starts with `prefix` (not empty), by key: a range on the primary key. */
export function readSettingsWithPrefix(sqlite: Database, prefix: string): Array<{ key: string; value: string; updatedAt: string }> {
  const { from, below } = keyRangeOf(prefix);
  return sqlite.prepare('SELECT key, value, updated_at AS updatedAt FROM mirror_settings WHERE key >= ? AND key < ? ORDER BY key').all(from, below) as Array<{
    key: string;
    value: string;
    updatedAt: string;
  }>;
}

