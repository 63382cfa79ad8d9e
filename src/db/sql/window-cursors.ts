// Every write of the table sync_cursors: each date window of a plan and the page cursor where its
// walk goes on (the row of a window is recorded before its first page, so a killed run resumes it).
import type { Database, Statement } from '../sqlite.js';

/** A window of a plan, as the writes name it. */
export interface WindowRef {
  readonly planId: number;
  readonly windowStart: string;
  readonly windowEnd: string;
}

/** What a committed page moves its window's cursor to. */
export interface CursorAdvance {
  readonly window: WindowRef;
  /** The cursor of the next page; null after the window's last page. */
  readonly nextPage: string | null;
  /** The walk's first page: the window's counts (and its start time) begin afresh. */
  readonly firstPage: boolean;
  readonly records: number;
  /** The id of the page's last record; null for an empty page (the last one recorded stays). */
  readonly lastId: number | null;
  /** On a walk's first page: when the walk began, before its first request. */
  readonly walkStartedAt: string | null;
  /** The run writing the page: on a walk's first page, the run that began it. */
  readonly runId: number;
}

/** Who began the walk that completed a window, and when: what its days are as fresh as. */
export interface WalkBegun {
  readonly startedAt: string | null;
  readonly startedRunId: number | null;
}

const ADVANCE_SQL = `UPDATE sync_cursors SET next_page = :next, completed_at = NULL, pages = CASE WHEN :first THEN 1 ELSE pages + 1 END,
              records = CASE WHEN :first THEN :records ELSE records + :records END,
              last_id = CASE WHEN :last IS NOT NULL THEN :last WHEN :first THEN NULL ELSE last_id END,
              started_at = CASE WHEN :first THEN :started ELSE started_at END,
              started_run_id = CASE WHEN :first THEN :run ELSE started_run_id END
        WHERE plan_id = :plan AND window_start = :window`;

const RESTART_SQL =
  'UPDATE sync_cursors SET next_page = NULL, completed_at = NULL, pages = 0, records = 0, last_id = NULL, started_at = NULL, started_run_id = NULL WHERE plan_id = ? AND window_start = ?';

export class WindowCursors {
  readonly #add: Statement;
  readonly #advance: Statement;
  readonly #complete: Statement;
  readonly #restart: Statement;
  readonly #begun: Statement;
  readonly #deleteOfPlan: Statement;

  constructor(sqlite: Database) {
    this.#add = sqlite.prepare('INSERT INTO sync_cursors (plan_id, window_start, window_end) VALUES (?, ?, ?)');
    this.#advance = sqlite.prepare(ADVANCE_SQL);
    this.#complete = sqlite.prepare('UPDATE sync_cursors SET completed_at = ? WHERE plan_id = ? AND window_start = ? RETURNING started_at AS startedAt, started_run_id AS startedRunId');
    this.#restart = sqlite.prepare(RESTART_SQL);
    this.#begun = sqlite.prepare('SELECT started_at AS startedAt, started_run_id AS startedRunId FROM sync_cursors WHERE plan_id = ? AND window_start = ?');
    this.#deleteOfPlan = sqlite.prepare('DELETE FROM sync_cursors WHERE plan_id = ?');
  }

  add(window: WindowRef): void {
    this.#add.run(window.planId, window.windowStart, window.windowEnd);
  }

  advance(page: CursorAdvance): void {
    this.#advance.run({
      next: page.nextPage,
      first: page.firstPage ? 1 : 0,
      records: page.records,
      last: page.lastId,
      started: page.walkStartedAt,
      run: page.runId,
      plan: page.window.planId,
      window: page.window.windowStart,
    });
  }

  complete(window: WindowRef, at: string): WalkBegun {
    return (this.#complete.get(at, window.planId, window.windowStart) as WalkBegun | undefined) ?? { startedAt: null, startedRunId: null };
  }

  /** Who began the window's current walk, and when (read before a restart forgets it). */
  begun(window: Pick<WindowRef, 'planId' | 'windowStart'>): WalkBegun {
    return (this.#begun.get(window.planId, window.windowStart) as WalkBegun | undefined) ?? { startedAt: null, startedRunId: null };
  }

  /** Back to before its first page: the next walk of the window starts from there. */
  restart(window: Pick<WindowRef, 'planId' | 'windowStart'>): void {
    this.#restart.run(window.planId, window.windowStart);
  }

  deleteOfPlan(planId: number): void {
    this.#deleteOfPlan.run(planId);
  }
}
