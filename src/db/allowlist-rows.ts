// Every write of the table allowlist and of its settings: THREAT_MIRROR_ALLOWLIST mirrored for SQL
// readers (the view enforced_threats reads it). Replaced whole when the version differs, else left
// as it is (no write, no WAL): the writer mirrors the list at start, after each run and whenever
// the daemon takes a new version.
import type { AllowEntry } from '../allowlist/allowlist-entries.js';
import type { Database, Statement } from './sqlite.js';

/** The version of the list the mirror should hold; null: no allowlist is configured (the table is emptied). */
export interface MirroredAllowlist {
  readonly file: string;
  readonly version: string;
  /** When the list came into use (the daemon's time of taking it). */
  readonly appliedAt: string;
  readonly entries: readonly AllowEntry[];
}

/** mirror_settings keys: which file, which version (sha256 of its bytes), since when. */
export const ALLOWLIST_FILE_KEY = 'allowlist_file';
export const ALLOWLIST_VERSION_KEY = 'allowlist_version';
export const ALLOWLIST_APPLIED_AT_KEY = 'allowlist_applied_at';

export class AllowlistRows {
  readonly #sqlite: Database;
  readonly #setting: Statement;
  readonly #recordSetting: Statement;
  readonly #deleteSettings: Statement;
  readonly #insert: Statement;
  readonly #count: Statement;

  constructor(sqlite: Database) {
    this.#sqlite = sqlite;
    this.#setting = sqlite.prepare('SELECT value FROM mirror_settings WHERE key = ?').pluck();
    this.#recordSetting = sqlite.prepare(
      'INSERT INTO mirror_settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
    );
    this.#deleteSettings = sqlite.prepare(`DELETE FROM mirror_settings WHERE key IN ('${ALLOWLIST_FILE_KEY}', '${ALLOWLIST_VERSION_KEY}', '${ALLOWLIST_APPLIED_AT_KEY}')`);
    this.#insert = sqlite.prepare(
      `INSERT INTO allowlist (line, value, kind, reason, host, path, query, address, address_namespace, address_chain, email)
       VALUES (@line, @value, @kind, @reason, @host, @path, @query, @address, @addressNamespace, @addressChain, @email)`,
    );
    this.#count = sqlite.prepare('SELECT count(*) FROM allowlist').pluck();
  }

  /** Makes the table and its settings hold `list`; in the caller's transaction. Answers whether anything was written. */
  mirror(list: MirroredAllowlist | null, now: string): boolean {
    const version = this.#setting.get(ALLOWLIST_VERSION_KEY) as string | undefined;
    const file = this.#setting.get(ALLOWLIST_FILE_KEY) as string | undefined;
    if (list === null) {
      if (version === undefined && file === undefined && this.#count.get() === 0) return false;
      this.#sqlite.exec('DELETE FROM allowlist');
      this.#deleteSettings.run();
      return true;
    }
    if (version === list.version && file === list.file) return false;
    this.#sqlite.exec('DELETE FROM allowlist');
    for (const entry of list.entries) {
      const { line, value, kind, reason, host, path, query, address, addressNamespace, addressChain, email } = entry;
      this.#insert.run({ line, value, kind, reason, host, path, query, address, addressNamespace, addressChain, email });
    }
    this.#recordSetting.run(ALLOWLIST_FILE_KEY, list.file, now);
    this.#recordSetting.run(ALLOWLIST_VERSION_KEY, list.version, now);
    this.#recordSetting.run(ALLOWLIST_APPLIED_AT_KEY, list.appliedAt, now);
    return true;
  }
}
