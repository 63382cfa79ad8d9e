-- Only the rejected proposals (rule 3 of the report listing: a report returned by onlyRejected
-- may also hold proposals that are not rejected). Statuses are compared without case; a
-- deployment that reports TODO / IN_PROGRESS / CLOSED instead has no "rejected" to show.
CREATE VIEW `rejected_proposals` AS
SELECT p.organization, p.report_id, p.id AS proposal_id, p.review_status, p.asset_id, p.asset_type,
       p.asset_content, p.asset_status, p.threat_id, r.created_at AS report_created_at, r.status AS report_status
  FROM report_proposals p
  JOIN reports r ON r.organization = p.organization AND r.id = p.report_id
 WHERE upper(p.review_status) = 'REJECTED';
--> statement-breakpoint
-- sync_status speaks of the threats stream: the one readers' answers come from.
DROP VIEW `sync_status`;
--> statement-breakpoint
CREATE VIEW `sync_status` AS
WITH threat_runs AS (
  SELECT * FROM sync_runs WHERE stream = 'threats'
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
  (SELECT CAST(value AS INTEGER) FROM mirror_settings WHERE key = 'lookback_days') AS rescan_days
FROM organizations o
LEFT JOIN sync_checkpoints c ON c.organization = o.organization
LEFT JOIN last_run lr ON lr.organization = o.organization
LEFT JOIN threat_runs r ON r.id = lr.id
LEFT JOIN last_success s ON s.organization = o.organization
LEFT JOIN last_failure lf ON lf.organization = o.organization
LEFT JOIN threat_runs f ON f.id = lf.id;
