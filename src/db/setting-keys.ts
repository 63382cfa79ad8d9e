// The keys of mirror_settings, for the writer that records them and the readers that read them
// (the sync_status view reads the first three by these names).

/** Days every incremental run re-scans: only those days can show removals (sync_status.rescan_days). */
export const LOOKBACK_DAYS_KEY = 'lookback_days';
/** How old a day's last walk may be before sync_status counts it overdue. */
export const RECONCILE_DAYS_KEY = 'reconcile_days';
/** The daemon's: no successful run for this long makes sync_status.stale true. */
export const STALE_AFTER_SECONDS_KEY = 'stale_after_seconds';
/** A deprecation the service announced: the rest of the key is the endpoint, the value JSON. */
export const DEPRECATION_KEY_PREFIX = 'deprecation ';
/** A lookup index waiting to be built: the rest of the key is its name, the value its definition. */
export const DEFERRED_INDEX_KEY_PREFIX = 'deferred_index:';
/** THREAT_MIRROR_ALLOWLIST as the table allowlist holds it: its file, version (sha256 of its bytes), and since when it is in use. */
export const ALLOWLIST_FILE_KEY = 'allowlist_file';
export const ALLOWLIST_VERSION_KEY = 'allowlist_version';
export const ALLOWLIST_APPLIED_AT_KEY = 'allowlist_applied_at';

/** Per organization, where its walk toward THREAT_MIRROR_HISTORY_FROM began (JSON; db/read/history-reads.ts). */
export const HISTORY_WALK_KEY_PREFIX = 'history_walk:';

/**
 * The change feed's identity (docs/schema.md, "Change feed"): set when the file has none (a file
 * built anew) and anew when it was restored from a replica at this start. A reader keeps it with
 * its last change_seq; another value means a copy that may lack changes the reader saw.
 */
export const FEED_ID_KEY = 'feed_id';

/** The version of the lookup rules (url/lookup-rules.ts) every stored row's lookup columns follow. */
export const LOOKUP_RULES_KEY = 'lookup_rules';
/** While the rows are derived again under newer rules: `version:last id done`, so a killed start resumes. */
export const LOOKUP_RULES_PROGRESS_KEY = 'lookup_rules_progress';

/** The keys that start with `prefix` (not empty) are those in [from, below): a range on the primary key. */
export function keyRangeOf(prefix: string): { from: string; below: string } {
  return { from: prefix, below: prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1) };
}
