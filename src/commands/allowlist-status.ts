// `threat-mirror status`: the allowlist the mirror holds (the table `allowlist` and its settings,
// as the last writer mirrored THREAT_MIRROR_ALLOWLIST): its file, entries and when it was applied.
import type Database from 'better-sqlite3';
import { ALLOWLIST_APPLIED_AT_KEY, ALLOWLIST_FILE_KEY, ALLOWLIST_VERSION_KEY } from '../db/allowlist-rows.js';

export interface AllowlistStatus {
  readonly file: string;
  readonly entries: number;
  /** sha256 of the file's bytes, as applied. */
  readonly version: string | null;
  readonly appliedAt: string | null;
}

/** null: the writer has no allowlist (or the file predates the table). */
export function readAllowlistStatus(sqlite: Database.Database): AllowlistStatus | null {
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

export function formatAllowlistStatus(status: AllowlistStatus | null): string {
  if (status === null) return 'allowlist: none (THREAT_MIRROR_ALLOWLIST unset for the last writer)\n';
  return `allowlist: ${status.entries} ${status.entries === 1 ? 'entry' : 'entries'} from ${status.file}, applied ${status.appliedAt ?? '(unknown)'}\n`;
}
