-- Asset type scope (issue 30, docs/configuration.md "Asset type scope"):
--   organization_scopes: the asset types each organization mirrors now (no row: every type);
--   organization_threats.out_of_scope: 1 while a threat's type is outside its organization's scope
--     (narrowed after it was mirrored): hidden from current_threats and every answer, yet not removed;
--   sync_windows.asset_types: the types the walk that recorded the day asked for (a digest is
--     compared only with a walk of the same);
--   sync_plans.widening: a plan that walks only the types a widened scope added, over days mirrored.
-- sync_status gains asset_types.
CREATE TABLE `organization_scopes` (
	`organization` text PRIMARY KEY NOT NULL,
	`asset_types` text,
	`changed_at` text NOT NULL
);
--> statement-breakpoint
ALTER TABLE `sync_windows` ADD `asset_types` text;--> statement-breakpoint
ALTER TABLE `organization_threats` ADD `out_of_scope` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sync_plans` ADD `widening` text;;--> statement-breakpoint
DROP VIEW `current_threats`;--> statement-breakpoint
-- What each organization has blocked now: its threats neither removed nor outside its scope.
CREATE VIEW `current_threats` AS
SELECT o.organization, t.id, t.content, t.type, t.blocked_at, t.host, t.registrable_domain,
       t.address_namespace, t.address_chain, t.address, t.email, t.email_domain,
       t.change_seq, o.first_seen_at, t.updated_at
  FROM organization_threats o
  JOIN threats t ON t.id = o.threat_id
 WHERE o.removed_at IS NULL AND o.out_of_scope = 0;--> statement-breakpoint
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
  UNION
  SELECT organization FROM organization_scopes
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
  rs.cycle_completed_at AS last_full_reconcile_at,
  sc.asset_types AS asset_types
FROM organizations o
LEFT JOIN sync_checkpoints c ON c.organization = o.organization
LEFT JOIN last_run lr ON lr.organization = o.organization
LEFT JOIN threat_runs r ON r.id = lr.id
LEFT JOIN last_success s ON s.organization = o.organization
LEFT JOIN last_failure lf ON lf.organization = o.organization
LEFT JOIN threat_runs f ON f.id = lf.id
LEFT JOIN overdue ov ON ov.organization = o.organization
LEFT JOIN reconcile_state rs ON rs.organization = o.organization
LEFT JOIN organization_scopes sc ON sc.organization = o.organization;
