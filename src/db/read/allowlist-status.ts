// The allowlist the mirror holds (the table allowlist and its settings, as the last writer mirrored
// THREAT_MIRROR_ALLOWLIST): its file, entries and when it came into use. What `status` shows.
import { ALLOWLIST_APPLIED_AT_KEY, ALLOWLIST_FILE_KEY, ALLOWLIST_VERSION_KEY } from '../setting-keys.js';
import type { Database } from '../sqlite.js';

export interface AllowlistStatus {
  readonly file: string;
  readonly entries: number;
  /** sha256 of the file's bytes, as applied. */
  readonly version: string | null;
  readonly appliedAt: string | null;
}

/** null: the last writer had no allowlist (or the file predates the table). */
export function readAllowlistStatus(sqlite: Database): AllowlistStatus | null {
  const hasTable = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'allowlist'").get() !== undefined;
  if (!hasTable) return null;
  const setting = sqlite.prepare('SELECT value FROM mirror_settings WHERE key = ?').pluck();
  const file = setting.get(ALLOWLIST_FILE_KEY) as string | undefined;
  if (file === undefined) return null;
  return {
    file,
    entries: sqlite.prepare('SELECT count(*) FROM allowlist').pluck().get() as number,
    version: (setting.get(ALLOWLIST_VERSION_KEY) as string | undefined) ?? null,
    appliedAt: (setting.get(ALLOWLIST_APPLIED_AT_KEY) as string | undefined) ?? null,
  };
}
