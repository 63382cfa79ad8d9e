// A mirror file as an older version of threat-mirror left it: every migration before the one named,
// for tests of what a migration does to data written before it.
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { migrationsFolder } from '../../src/db/writer/writer-connection.js';
import { Database } from '../../src/db/sqlite.js';
import { tempDir } from './temp.js';

/**
 * Creates `dbPath` at the schema before the migration whose tag ends with `migrationSuffix` (e.g.
 * '_url_expression'), runs `fill` on it (rows as that version wrote them), and closes it.
 */
export function createFileBeforeMigration(dbPath: string, migrationSuffix: string, fill: (db: Database) => void): void {
  const oldMigrations = join(tempDir(), 'drizzle');
  cpSync(migrationsFolder(), oldMigrations, { recursive: true });
  const journalPath = join(oldMigrations, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: Array<{ tag: string }> };
  const ours = journal.entries.findIndex((entry) => entry.tag.endsWith(migrationSuffix));
  if (ours <= 0) throw new Error(`no migration after the first ends with ${migrationSuffix}`);
  for (const entry of journal.entries.slice(ours)) rmSync(join(oldMigrations, `${entry.tag}.sql`));
  writeFileSync(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, ours) }));
  const old = new Database(dbPath);
  try {
    old.pragma('journal_mode = WAL');
    migrate(drizzle(old), { migrationsFolder: oldMigrations });
    fill(old);
  } finally {
    old.close();
  }
}
