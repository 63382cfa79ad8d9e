// Reads what the mirror left in its SQLite file, the way a reader would.
import { Database } from '../../src/db/sqlite.js';

export interface ThreatRow {
  id: number;
  content: string;
  type: string;
  blockedAt: string;
}

export function withDb<T>(path: string, read: (db: Database) => T): T {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** For a test that plays a fault or an older version: changes the file outside the mirror. */
export function withWritableDb<T>(path: string, change: (db: Database) => T): T {
  const db = new Database(path, { fileMustExist: true });
  try {
    return change(db);
  } finally {
    db.close();
  }
}

/** The threats the mirror holds for one organization, by id. */
export function mirroredThreats(path: string, organization: string): ThreatRow[] {
  return withDb(path, (db) =>
    db
      .prepare(
        `SELECT t.id, t.content, t.type, t.blocked_at AS blockedAt
           FROM threats t JOIN organization_threats o ON o.threat_id = t.id
          WHERE o.organization = ? ORDER BY t.id`,
      )
      .all(organization) as ThreatRow[],
  );
}

export function runs(path: string): Array<Record<string, unknown>> {
  return withDb(path, (db) => db.prepare('SELECT * FROM sync_runs ORDER BY id').all() as Array<Record<string, unknown>>);
}

export function scalar<T>(path: string, sql: string, ...params: unknown[]): T {
  return withDb(path, (db) => db.prepare(sql).pluck().get(...params) as T);
}
