// Every write of the table mirror_settings: what the writer records for readers (the sync_status
// view reads some), the service's notices, and the definitions of deferred indexes.
import type { Database, Statement } from '../sqlite.js';
import { keyRangeOf } from '../setting-keys.js';

export class MirrorSettings {
  readonly #record: Statement;
  readonly #deleteRange: Statement;
  readonly #delete: Statement;
  readonly #value: Statement;

  constructor(sqlite: Database) {
    this.#record = sqlite.prepare(
      'INSERT INTO mirror_settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
    );
    this.#deleteRange = sqlite.prepare('DELETE FROM mirror_settings WHERE key >= ? AND key < ?');
    this.#delete = sqlite.prepare('DELETE FROM mirror_settings WHERE key = ?');
    this.#value = sqlite.prepare('SELECT value FROM mirror_settings WHERE key = ?').pluck();
  }

  /** What the writer recorded before (read on its own connection, in its transaction). */
  value(key: string): string | undefined {
    return this.#value.get(key) as string | undefined;
  }

  record(key: string, value: string, now: string): void {
    this.#record.run(key, value, now);
  }

  delete(key: string): void {
    this.#delete.run(key);
  }

  /** Deletes every setting whose key starts with `prefix`. */
  deleteWithPrefix(prefix: string): void {
    const { from, below } = keyRangeOf(prefix);
    this.#deleteRange.run(from, below);
  }
}
