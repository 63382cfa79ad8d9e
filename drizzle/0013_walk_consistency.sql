-- Walks known to be consistent (docs/reconciliation.md):
--   sync_cursors.last_id: the last id of a window's last committed page; a resumed walk re-reads
--     the page before its cursor and goes on only if that page still ends there.
--   sync_cursors.started_at: when the walk of a window began; a day counts toward complete_through
--     only if its window's walk began after the day ended. Windows recorded before this migration
--     are taken to have begun when their plan was made (earlier than any of their requests).
--   sync_windows.estimated_records: the size a reconciliation cut short by its budget saw.
-- sync_status's run columns (last_run_status, last_success_at, last_error, stale) now describe
-- the incremental sync alone, as docs/reconciliation.md says: a backfill or a verify of old days
-- says nothing about whether the recent days are current.
ALTER TABLE `sync_windows` ADD `estimated_records` integer;--> statement-breakpoint
ALTER TABLE `sync_cursors` ADD `last_id` integer;--> statement-breakpoint
ALTER TABLE `sync_cursors` ADD `started_at` text;--> statement-breakpoint
UPDATE `sync_cursors` SET `started_at` = (SELECT `created_at` FROM `sync_plans` WHERE `sync_plans`.`id` = `sync_cursors`.`plan_id`);--> statement-breakpoint
DROP VIEW `sync_status`;
--> statement-breakpoint
CREATE VIEW `sync_status` AS
WITH threat_runs AS (
  SELECT * FROM sync_runs WHERE stream = 'threats' AND mode = 'incremental'
),
organizations AS (
  SELECT organization FROM sync_runs WHERE stream = 'threats'
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
  SELECT organization, MAX(id) AS id FROM threat_runs GROUP BY organization
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
