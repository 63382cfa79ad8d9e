-- sync_status gains how fresh each organization's whole history is (docs/reconciliation.md):
--   overdue_days, oldest_overdue_day: mirrored days (rows of the sync_windows ledger) not walked
--     within THREAT_MIRROR_RECONCILE_DAYS (recorded in mirror_settings as reconcile_days; 7 until
--     then) before the start of the organization's last incremental run, and not by that run
--     itself (with 0, every day that run did not walk). Measured against the mirror's own clock,
--     so a mirror that stopped shows stale = 1 rather than a growing count.
--   last_full_reconcile_at: when a run last left no mirrored day overdue.
-- The columns about runs keep describing the incremental sync: reconciliation runs are left out.
DROP VIEW `sync_status`;
--> statement-breakpoint
CREATE VIEW `sync_status` AS
WITH threat_runs AS (
  SELECT * FROM sync_runs WHERE stream = 'threats' AND mode <> 'reconcile'
),
organizations AS (
  SELECT organization FROM threat_runs
  UNION
  SELECT organization FROM sync_checkpoints
),
last_run AS (
  SELECT organization, MAX(id) AS id FROM threat_runs GROUP BY organization
),
last_success AS (
  SELECT organization, MAX(finished_at) AS finished_at FROM threat_runs WHERE status = 'succeeded' GROUP BY organization
),
last_failure AS (
  SELECT organization, MAX(id) AS id FROM threat_runs WHERE status = 'failed' GROUP BY organization
),
threshold AS (
  SELECT COALESCE((SELECT CAST(value AS INTEGER) FROM mirror_settings WHERE key = 'stale_after_seconds'), 1200) AS seconds
),
reconcile_days AS (
  SELECT COALESCE((SELECT CAST(value AS INTEGER) FROM mirror_settings WHERE key = 'reconcile_days'), 7) AS days
),
last_incremental AS (
  SELECT organization, MAX(id) AS id FROM threat_runs WHERE mode = 'incremental' GROUP BY organization
),
overdue AS (
  SELECT w.organization, MIN(w.day) AS oldest_day, COUNT(*) AS days
    FROM last_incremental li
    JOIN sync_runs lr ON lr.id = li.id
    JOIN sync_windows w ON w.organization = li.organization AND w.run_id < li.id
   WHERE (SELECT days FROM reconcile_days) = 0
      OR w.completed_at < strftime('%Y-%m-%dT%H:%M:%fZ', lr.started_at, '-' || (SELECT days FROM reconcile_days) || ' days')
   GROUP BY w.organization
)
SELECT
  o.organization AS organization,
  c.complete_through AS complete_through,
  r.status AS last_run_status,
  r.started_at AS last_run_started_at,
  r.finished_at AS last_run_finished_at,
  s.finished_at AS last_success_at,
  f.error AS last_error,
  f.finished_at AS last_error_at,
  (SELECT seconds FROM threshold) AS stale_after_seconds,
  CASE
    WHEN s.finished_at IS NULL THEN 1
    WHEN (julianday('now') - julianday(s.finished_at)) * 86400 > (SELECT seconds FROM threshold) THEN 1
    ELSE 0
  END AS stale,
  (SELECT CAST(value AS INTEGER) FROM mirror_settings WHERE key = 'lookback_days') AS rescan_days,
  COALESCE(ov.days, 0) AS overdue_days,
  ov.oldest_day AS oldest_overdue_day,
  rs.cycle_completed_at AS last_full_reconcile_at
FROM organizations o
LEFT JOIN sync_checkpoints c ON c.organization = o.organization
LEFT JOIN last_run lr ON lr.organization = o.organization
LEFT JOIN threat_runs r ON r.id = lr.id
LEFT JOIN last_success s ON s.organization = o.organization
LEFT JOIN last_failure lf ON lf.organization = o.organization
LEFT JOIN threat_runs f ON f.id = lf.id
LEFT JOIN overdue ov ON ov.organization = o.organization
LEFT JOIN reconcile_state rs ON rs.organization = o.organization;
