// The hot path: one page of records and the checkpoint after it, in one synchronous transaction.
//
// Raw better-sqlite3 statements rather than drizzle's: per row, drizzle's placeholder mapping cost
// more than SQLite's own work (profiled: 1.9 s of 5.1 s for 200,000 threats). Rows go in
// multi-row statements of 100, 10 and 1 rows, prepared once: a full page is one call, and the
// statement cache stays at three sizes (one per partial-page size held ~15 MB more at 1M threats).
import type Database from 'better-sqlite3';
import type { RejectedRecord } from '../api/threat-client.js';
import type { Threat } from '../api/threat-record.js';
import { addDays, daysBetween } from '../days.js';

export interface PageCounts {
  readonly inserted: number;
  readonly updated: number;
  readonly rejected: number;
}

export interface PageInput {
  readonly organization: string;
  readonly runId: number;
  readonly window: { readonly planId: number; readonly windowStart: string; readonly windowEnd: string };
  readonly threats: readonly Threat[];
  readonly rejected: readonly RejectedRecord[];
  readonly nextPage: string | null;
  readonly retries: number;
  /** This page's write stamp; strictly later than the previous page's. */
  readonly stamp: string;
}

type Statement = Database.Statement<unknown[], unknown>;

export class PageWriter {
  readonly #sqlite: Database.Database;
  readonly #upserts = new Map<number, Statement>();
  readonly #links = new Map<number, Statement>();
  readonly #insertRejected: Statement;
  readonly #advanceCursor: Statement;
  readonly #completeDay: Statement;
  readonly #countRunPage: Statement;
  readonly #write: (input: PageInput) => PageCounts;

  constructor(sqlite: Database.Database) {
    this.#sqlite = sqlite;
    this.#insertRejected = sqlite.prepare('INSERT INTO rejected_records (organization, run_id, raw, reason, seen_at) VALUES (?, ?, ?, ?, ?)');
    this.#advanceCursor = sqlite.prepare(
      'UPDATE sync_cursors SET next_page = ?, pages = pages + 1, records = records + ?, completed_at = ? WHERE plan_id = ? AND window_start = ?',
    );
    this.#completeDay = sqlite.prepare(
      `INSERT INTO sync_windows (organization, day, completed_at, run_id) VALUES (?, ?, ?, ?)
       ON CONFLICT (organization, day) DO UPDATE SET completed_at = excluded.completed_at, run_id = excluded.run_id`,
    );
    this.#countRunPage = sqlite.prepare(
      `UPDATE sync_runs SET pages = pages + 1, retries = retries + ?, threats_inserted = threats_inserted + ?,
              threats_updated = threats_updated + ?, threats_rejected = threats_rejected + ? WHERE id = ?`,
    );
    this.#write = sqlite.transaction((input: PageInput) => this.#writePage(input));
  }

  write(input: PageInput): PageCounts {
    return this.#write(input);
  }

  #writePage(input: PageInput): PageCounts {
    const { stamp } = input;
    // One statement may not upsert the same row twice; a page that repeats an id keeps the last.
    const threats = uniqueById(input.threats);
    let inserted = 0;
    let updated = 0;
    for (const chunk of chunks(threats)) {
      const values: unknown[] = [];
      for (const threat of chunk) values.push(threat.id, threat.content, threat.type, threat.blockedAt, stamp, stamp);
      // A row is returned only when written: first_seen_at equal to this page's stamp means inserted.
      const written = this.#upsertStatement(chunk.length).all(values) as Array<{ first_seen_at: string }>;
      for (const row of written) {
        if (row.first_seen_at === stamp) inserted += 1;
        else updated += 1;
      }
      const links: unknown[] = [];
      for (const threat of chunk) links.push(input.organization, threat.id, stamp);
      this.#linkStatement(chunk.length).run(links);
    }
    for (const record of input.rejected) {
      this.#insertRejected.run(input.organization, input.runId, JSON.stringify(record.raw) ?? 'undefined', record.reason, stamp);
    }
    const windowDone = input.nextPage === null;
    this.#advanceCursor.run(input.nextPage, input.threats.length, windowDone ? stamp : null, input.window.planId, input.window.windowStart);
    if (windowDone) {
      const days = daysBetween(input.window.windowStart, input.window.windowEnd);
      for (let offset = 0; offset < days; offset += 1) {
        this.#completeDay.run(input.organization, addDays(input.window.windowStart, offset), stamp, input.runId);
      }
    }
    const counts = { inserted, updated, rejected: input.rejected.length };
    this.#countRunPage.run(input.retries, inserted, updated, counts.rejected, input.runId);
    return counts;
  }

  #upsertStatement(rows: number): Statement {
    let statement = this.#upserts.get(rows);
    if (!statement) {
      statement = this.#sqlite.prepare(
        `INSERT INTO threats (id, content, type, blocked_at, first_seen_at, updated_at) VALUES ${placeholders(rows, 6)}
         ON CONFLICT (id) DO UPDATE SET content = excluded.content, type = excluded.type, blocked_at = excluded.blocked_at, updated_at = excluded.updated_at
         WHERE threats.content IS NOT excluded.content OR threats.type IS NOT excluded.type OR threats.blocked_at IS NOT excluded.blocked_at
         RETURNING first_seen_at`,
      );
      this.#upserts.set(rows, statement);
    }
    return statement;
  }

  #linkStatement(rows: number): Statement {
    let statement = this.#links.get(rows);
    if (!statement) {
      statement = this.#sqlite.prepare(
        `INSERT INTO organization_threats (organization, threat_id, first_seen_at) VALUES ${placeholders(rows, 3)} ON CONFLICT DO NOTHING`,
      );
      this.#links.set(rows, statement);
    }
    return statement;
  }
}

const CHUNK_SIZES = [100, 10, 1] as const;

/** Splits rows into runs of 100, 10 and 1, the sizes the statements are prepared for. */
function* chunks<T>(rows: readonly T[]): Generator<readonly T[]> {
  let offset = 0;
  for (const size of CHUNK_SIZES) {
    while (rows.length - offset >= size) {
      yield rows.slice(offset, offset + size);
      offset += size;
    }
  }
}

function placeholders(rows: number, columns: number): string {
  const row = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
  return Array.from({ length: rows }, () => row).join(', ');
}

function uniqueById(threats: readonly Threat[]): readonly Threat[] {
  const ids = new Set<number>();
  let duplicate = false;
  for (const threat of threats) {
    if (ids.has(threat.id)) duplicate = true;
    ids.add(threat.id);
  }
  if (!duplicate) return threats;
  return [...new Map(threats.map((threat) => [threat.id, threat])).values()];
}
