// Settings the writer records for readers (mirror_settings): the sync_status view reads some.
import type { MirrorDatabase } from './open-database.js';
import { mirrorSettings } from './schema.js';
import type { Database } from './sqlite.js';
import { immediately } from './write-transaction.js';

export class SettingsWriter {
  readonly #sqlite: Database;
  readonly #db: MirrorDatabase;

  constructor(sqlite: Database, db: MirrorDatabase) {
    this.#sqlite = sqlite;
    this.#db = db;
  }

  record(key: string, value: string, now: string): void {
    immediately(this.#sqlite, () =>
      this.#db
        .insert(mirrorSettings)
        .values({ key, value, updatedAt: now })
        .onConflictDoUpdate({ target: mirrorSettings.key, set: { value, updatedAt: now } })
        .run(),
    );
  }
}
