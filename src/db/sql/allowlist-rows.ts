// Every write of the table allowlist: THREAT_MIRROR_ALLOWLIST mirrored for SQL readers (the view
// enforced_threats reads it), with its file, version and time of use in mirror_settings. Replaced
// whole when the version differs, else left as it is (no write, no WAL): the writer mirrors the
// list at start, after each run and whenever the daemon takes a new version.
import type { AllowEntry } from '../../allowlist/allowlist-entries.js';
import { ALLOWLIST_APPLIED_AT_KEY, ALLOWLIST_FILE_KEY, ALLOWLIST_VERSION_KEY } from '../setting-keys.js';
import type { Database, Statement } from '../sqlite.js';
import type { MirrorSettings } from './settings.js';

/** The version of the list the mirror should hold. */
export interface MirroredAllowlist {
  readonly file: string;
  /** sha256 of the file's bytes. */
  readonly version: string;
  /** When the list came into use (ISO timestamp). */
  readonly appliedAt: string;
  readonly entries: readonly AllowEntry[];
}

export class AllowlistRows {
  readonly #settings: MirrorSettings;
  readonly #setting: Statement;
  readonly #deleteAll: Statement;
  readonly #insert: Statement;
  readonly #count: Statement;

  constructor(sqlite: Database, settings: MirrorSettings) {
    this.#settings = settings;
    this.#setting = sqlite.prepare('SELECT value FROM mirror_settings WHERE key = ?').pluck();
    this.#deleteAll = sqlite.prepare('DELETE FROM allowlist');
    this.#insert = sqlite.prepare(
      `INSERT INTO allowlist (line, value, kind, reason, host, path, query, address, address_namespace, address_chain, email)
       VALUES (@line, @value, @kind, @reason, @host, @path, @query, @address, @addressNamespace, @addressChain, @email)`,
    );
    this.#count = sqlite.prepare('SELECT count(*) FROM allowlist').pluck();
  }

  /**
   * Makes the table and its settings hold `list` (null: no allowlist is configured, the table is
   * emptied); in the caller's transaction. Answers whether anything was written.
   */
  mirror(list: MirroredAllowlist | null, now: string): boolean {
    const version = this.#setting.get(ALLOWLIST_VERSION_KEY) as string | undefined;
    const file = this.#setting.get(ALLOWLIST_FILE_KEY) as string | undefined;
    if (list === null) {
      if (version === undefined && file === undefined && this.#count.get() === 0) return false;
      this.#deleteAll.run();
      for (const key of [ALLOWLIST_FILE_KEY, ALLOWLIST_VERSION_KEY, ALLOWLIST_APPLIED_AT_KEY]) this.#settings.delete(key);
      return true;
    }
    if (version === list.version && file === list.file) return false;
    this.#deleteAll.run();
    for (const entry of list.entries) {
      const { line, value, kind, reason, host, path, query, address, addressNamespace, addressChain, email } = entry;
      this.#insert.run({ line, value, kind, reason, host, path, query, address, addressNamespace, addressChain, email });
    }
    this.#settings.record(ALLOWLIST_FILE_KEY, list.file, now);
    this.#settings.record(ALLOWLIST_VERSION_KEY, list.version, now);
    this.#settings.record(ALLOWLIST_APPLIED_AT_KEY, list.appliedAt, now);
    return true;
  }
}
