// What the file says of each organization's sync, for whoever must say whether the mirror can
// vouch for an answer (lookup, /v1/lookup, status, /readyz) and for the daemon's metrics at start:
// its last finished incremental threats run, its last success, its complete_through, its failed
// runs in a row, and the staleness threshold the daemon recorded. Indexed reads by organization
// (sync_runs_organization), cheap enough for every lookup request; none writes.
import { STALE_AFTER_SECONDS_KEY } from '../setting-keys.js';
import { historyWalkKey } from './history-reads.js';
import { RETIRED_AT_SQL, RETIRED_ORGANIZATIONS_SQL } from './answered-organizations.js';
import { type Database, prepareIfMigrated, type Statement } from '../sqlite.js';

/**
 * No successful incremental run for this long is stale when no daemon has recorded its own
 * threshold (twice the longest gap of its schedule): the default schedule's, as sync_status's
 * COALESCE says too.
 */
export const DEFAULT_STALE_AFTER_SECONDS = 1200;

/** One organization's incremental threats sync as the file records it; nulls: nothing of the kind yet. */
export interface SyncRecord {
  readonly organization: string;
  /** The last finished (not running) incremental threats run's status. */
  readonly lastRunStatus: string | null;
  readonly lastSuccessAt: string | null;
  /** The last finished incremental threats run's error (null when it did not fail). */
  readonly lastError: string | null;
  readonly completeThrough: string | null;
  /**
   * The first day from which every day through complete_through was walked whole: sync_status's
   * history_from (drizzle/0018), read for one organization from its ledger; null before any.
   */
  readonly historyFrom: string | null;
  /** When a writer retired it (no longer configured): the file answers for none of its threats; null while configured. */
  readonly retiredAt: string | null;
  /** The asset types it mirrors (THREAT_MIRROR_ASSET_TYPES), sorted; null: every type. */
  readonly assetTypes: readonly string[] | null;
  /** The types a widened scope added whose walk over the mirrored days is not done (`*`: every type); empty when none is under way. */
  readonly widening: readonly string[];
  /**
   * The configured start the history walk goes toward (sync_status.history_target), as the
   * writer's last run recorded it; null when that run found the walk off
   * (THREAT_MIRROR_HISTORY_MAX_REQUESTS=0) or none recorded one.
   */
  readonly historyWalkTarget: string | null;
}

const INCREMENTAL = "organization = @organization AND stream = 'threats' AND mode = 'incremental'";

export class SyncHealthReads {
  readonly #lastRun: Statement;
  readonly #lastSuccess: Statement;
  readonly #completeThrough: Statement;
  readonly #historyFrom: Statement;
  readonly #dataVersion: Statement;
  /** history_from by organization, as of the file's data_version #heldAt: it walks the ledger's days. */
  readonly #heldFromCache = new Map<string, string | null>();
  #heldAt: unknown;
  readonly #staleAfter: Statement;
  readonly #held: Statement;
  /** Undefined on a file from before retirements (migration 0019): none is retired there. */
  readonly #retiredAt: Statement | undefined;
  /** Undefined on a file from before scopes (migration 0015): every organization mirrors every type there. */
  readonly #assetTypes: Statement | undefined;
  readonly #widening: Statement | undefined;
  readonly #historyWalkTarget: Statement;
  readonly #failedInARow: Statement;
  readonly #firstRun: Statement;

  constructor(sqlite: Database) {
    this.#lastRun = sqlite.prepare(`SELECT status, error FROM sync_runs WHERE ${INCREMENTAL} AND status <> 'running' ORDER BY id DESC LIMIT 1`);
    // Runs of one organization never overlap: the latest success by id is the one that finished last.
    this.#lastSuccess = sqlite.prepare(`SELECT finished_at FROM sync_runs WHERE ${INCREMENTAL} AND status = 'succeeded' ORDER BY id DESC LIMIT 1`).pluck();
    this.#completeThrough = sqlite.prepare('SELECT complete_through FROM sync_checkpoints WHERE organization = ?').pluck();
    // The walked days through complete_through, newest first: the n-th (from 0) is complete_through
    // minus n days for as long as none is missing (as sync_status's held: test/history.test.ts
    // compares the two). An index range of sync_windows, one row a day.
    this.#historyFrom = sqlite
      .prepare(
        `SELECT min(day) FROM (
           SELECT w.day, CAST(julianday(c.complete_through) - julianday(w.day) AS INTEGER) AS back,
                  ROW_NUMBER() OVER (ORDER BY w.day DESC) - 1 AS rank
             FROM sync_checkpoints c
             JOIN sync_windows w ON w.organization = c.organization AND w.day <= c.complete_through AND w.run_id > 0
            WHERE c.organization = ?)
          WHERE back = rank`,
      )
      .pluck();
    // Changes when another connection (the writer) commits: the ledger is read again only then.
    this.#dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
    this.#staleAfter = sqlite.prepare('SELECT CAST(value AS INTEGER) FROM mirror_settings WHERE key = ?').pluck();
    // Every row of organization_threats was written by a run: the runs name them all, from an index
    // of a few thousand rows, where organization_threats would be read whole (a million, for a lookup).
    // Not those retired (no longer configured): the file answers for none of their threats. A file
    // from before retirements (migration 0019) has none.
    this.#retiredAt = prepareIfMigrated(sqlite, RETIRED_AT_SQL)?.pluck();
    this.#assetTypes = prepareIfMigrated(sqlite, 'SELECT asset_types FROM organization_scopes WHERE organization = ?')?.pluck();
    this.#widening = prepareIfMigrated(sqlite, 'SELECT group_concat(widening) FROM sync_plans WHERE organization = ? AND widening IS NOT NULL')?.pluck();
    this.#historyWalkTarget = sqlite.prepare("SELECT json_extract(value, '$.target') FROM mirror_settings WHERE key = ? AND coalesce(json_extract(value, '$.off'), 0) = 0").pluck();
    const held = 'SELECT organization FROM sync_runs UNION SELECT organization FROM sync_checkpoints';
    this.#held = (prepareIfMigrated(sqlite, `${held} EXCEPT ${RETIRED_ORGANIZATIONS_SQL} ORDER BY 1`) ?? sqlite.prepare(`${held} ORDER BY 1`)).pluck();
    // As the daemon counts in memory: a failure adds one, a success starts again at 0, an
    // interrupted (or skipped) run changes nothing; reconciliation runs are left out.
    this.#failedInARow = sqlite
      .prepare(
        `SELECT count(*) FROM sync_runs
          WHERE organization = @organization AND stream = @stream AND mode <> 'reconcile' AND status = 'failed'
            AND id > coalesce((SELECT max(id) FROM sync_runs
                                WHERE organization = @organization AND stream = @stream AND mode <> 'reconcile' AND status = 'succeeded'), 0)`,
      )
      .pluck();
    this.#firstRun = sqlite.prepare(`SELECT started_at FROM sync_runs WHERE ${INCREMENTAL} ORDER BY id LIMIT 1`).pluck();
  }

  record(organization: string): SyncRecord {
    const last = this.#lastRun.get({ organization }) as { status: string; error: string | null } | undefined;
    return {
      organization,
      lastRunStatus: last?.status ?? null,
      lastSuccessAt: (this.#lastSuccess.get({ organization }) as string | undefined) ?? null,
      lastError: last?.status === 'failed' ? last.error : null,
      completeThrough: (this.#completeThrough.get(organization) as string | null | undefined) ?? null,
      historyFrom: this.#heldFrom(organization),
      retiredAt: (this.#retiredAt?.get(organization) as string | null | undefined) ?? null,
      assetTypes: ((this.#assetTypes?.get(organization) as string | null | undefined) ?? null)?.split(',') ?? null,
      widening: [...new Set(((this.#widening?.get(organization) as string | null | undefined) ?? '').split(',').filter((type) => type !== ''))].sort(),
      historyWalkTarget: (this.#historyWalkTarget.get(historyWalkKey(organization)) as string | null | undefined) ?? null,
    };
  }

  /**
   * Its history_from, read from the ledger once per change of the file: ~250 µs for a year of days
   * (a lookup request judges every organization it asks about), against ~1 µs for the pragma.
   */
  #heldFrom(organization: string): string | null {
    const version = this.#dataVersion.get();
    if (version !== this.#heldAt) {
      this.#heldFromCache.clear();
      this.#heldAt = version;
    }
    let day = this.#heldFromCache.get(organization);
    if (day === undefined) {
      day = (this.#historyFrom.get(organization) as string | null | undefined) ?? null;
      this.#heldFromCache.set(organization, day);
    }
    return day;
  }

  /** Seconds without a successful incremental run after which an organization is stale. */
  staleAfterSeconds(): number {
    return (this.#staleAfter.get(STALE_AFTER_SECONDS_KEY) as number | null | undefined) ?? DEFAULT_STALE_AFTER_SECONDS;
  }

  /** Every organization the file answers for (it holds runs or a checkpoint of it, and it is not retired), by name. */
  heldOrganizations(): string[] {
    return this.#held.all() as string[];
  }

  /** Runs of the organization and stream that failed since its last success (the daemon's gauge at start). */
  failedInARow(organization: string, stream: 'threats' | 'reports'): number {
    return this.#failedInARow.get({ organization, stream }) as number;
  }

  /** When the organization's first incremental run started; null before any. */
  firstRunAt(organization: string): string | null {
    return (this.#firstRun.get({ organization }) as string | undefined) ?? null;
  }
}
