// What the walk toward THREAT_MIRROR_HISTORY_FROM reads (sync/history.ts), and `status` shows: the
// days the ledger holds as walked whole, and where the walk toward the configured start began.
import { daysBetween } from '../../lib/days.js';
import { HISTORY_WALK_KEY_PREFIX } from '../setting-keys.js';
import type { Database, Statement } from '../sqlite.js';

/**
 * Ledger rows of days walked whole. A day joined as never walked (sql/day-ledger.ts: run 0, a
 * threat moved there) is not: the history walk and `history_from` count it as missing.
 */
export const WALKED_DAY = 'run_id > 0';

/**
 * The days the history still lacks toward `target`: those before `heldFrom` (sync_status.history_from),
 * or every one through complete_through when no day is held whole. What `status` counts down and
 * /metrics reports (threat_mirror_history_missing).
 */
export function historyDaysMissing(target: string, heldFrom: string | null, completeThrough: string): number {
  if (heldFrom === null) return daysBetween(target, completeThrough);
  return heldFrom <= target ? 0 : daysBetween(target, heldFrom) - 1;
}

/** Where an organization's walk toward its configured start began (mirror_settings, `history_walk:NAME`). */
export interface HistoryWalkState {
  /** The first day the mirror must hold, as the last run computed it from the configuration. */
  readonly target: string;
  /** When the walk toward this target began: the first run that found days missing for it. */
  readonly startedAt: string;
  /** The first day held whole then (sync_status.history_from); null when none was. */
  readonly heldFromAtStart: string | null;
  /** THREAT_MIRROR_HISTORY_MAX_REQUESTS was 0 when the last run read it: the target is recorded, no walk goes toward it. */
  readonly off?: true;
}

export function historyWalkKey(organization: string): string {
  return `${HISTORY_WALK_KEY_PREFIX}${organization}`;
}

export class HistoryReads {
  readonly #walkedDays: Statement;
  readonly #state: Statement;
  readonly #heldFrom: Statement;
  readonly #density: Statement;

  constructor(sqlite: Database) {
    this.#walkedDays = sqlite.prepare(`SELECT day FROM sync_windows WHERE organization = ? AND day BETWEEN ? AND ? AND ${WALKED_DAY}`).pluck();
    this.#state = sqlite.prepare('SELECT value FROM mirror_settings WHERE key = ?').pluck();
    this.#heldFrom = sqlite.prepare('SELECT history_from FROM sync_status WHERE organization = ?').pluck();
    this.#density = sqlite.prepare(`SELECT sum(records) * 1.0 / count(*) FROM sync_windows WHERE organization = ? AND ${WALKED_DAY} AND records IS NOT NULL`).pluck();
  }

  /** The days between `from` and `to` the ledger holds as walked whole. */
  walkedDays(organization: string, from: string, to: string): Set<string> {
    return new Set(this.#walkedDays.all(organization, from, to) as string[]);
  }

  /** sync_status.history_from: the first day from which every day through complete_through was walked whole. */
  heldFrom(organization: string): string | null {
    return (this.#heldFrom.get(organization) as string | null | undefined) ?? null;
  }

  /** Threats per day walked, over the days held: what the walk assumes of older days until it has walked some. */
  heldDensity(organization: string): number | undefined {
    return (this.#density.get(organization) as number | null) ?? undefined;
  }

  walkState(organization: string): HistoryWalkState | undefined {
    const value = this.#state.get(historyWalkKey(organization)) as string | undefined;
    return value === undefined ? undefined : (JSON.parse(value) as HistoryWalkState);
  }
}
