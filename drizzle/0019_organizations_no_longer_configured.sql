-- Organizations no longer configured (docs/configuration.md "Organizations no longer configured"):
--   organization_scopes.retired_at: set by a writer whose THREAT_MIRROR_ORG / THREAT_MIRROR_ORGS
--     leaves out an organization the file holds: its threats are hidden from every answer
--     (organization_threats.out_of_scope = 1, through in_force), kept, and shown again when a writer
--     configures it again; cleared then.
-- sync_status leaves retired organizations out: it lists those the mirror answers for.
ALTER TABLE `organization_scopes` ADD `retired_at` text;--> statement-breakpoint
DROP VIEW `sync_status`;--> statement-breakpoint
CREATE VIEW `sync_status` AS
WITH threat_runs AS (
  SELECT * FROM sync_runs WHERE stream = 'threats' AND mode = 'incremental'
),
organizations AS (
  SELECT organization FROM sync_runs WHERE stream = 'threats'
  UNION
  SELECT organization FROM sync_checkpoints
  UNION
  SELECT organization FROM organization_scopes
  EXCEPT
  SELECT organization FROM organization_scopes WHERE retired_at IS NOT NULL
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
),
-- Walked days through complete_through, newest first: the n-th of them (from 0) is complete_through
-- minus n days for as long as no day is missing; the first that is not ends the history held whole.
walked AS (
  SELECT w.organization, w.day,
         CAST(julianday(c.complete_through) - julianday(w.day) AS INTEGER) AS back,
         ROW_NUMBER() OVER (PARTITION BY w.organization ORDER BY w.day DESC) - 1 AS rank
    FROM sync_checkpoints c
    JOIN sync_windows w ON w.organization = c.organization AND w.day <= c.complete_through AND w.run_id > 0
),
held AS (
  SELECT organization, MIN(day) AS from_day FROM walked WHERE back = rank GROUP BY organization
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
  rs.cycle_completed_at AS last_full_reconcile_at,
  sc.asset_types AS asset_types,
  h.from_day AS history_from,
  (SELECT json_extract(value, '$.target') FROM mirror_settings WHERE key = 'history_walk:' || o.organization) AS history_target
FROM organizations o
LEFT JOIN sync_checkpoints c ON c.organization = o.organization
LEFT JOIN last_run lr ON lr.organization = o.organization
LEFT JOIN threat_runs r ON r.id = lr.id
LEFT JOIN last_success s ON s.organization = o.organization
LEFT JOIN last_failure lf ON lf.organization = o.organization
LEFT JOIN threat_runs f ON f.id = lf.id
LEFT JOIN overdue ov ON ov.organization = o.organization
LEFT JOIN reconcile_state rs ON rs.organization = o.organization
LEFT JOIN organization_scopes sc ON sc.organization = o.organization
LEFT JOIN held h ON h.organization = o.organization;
