-- One row per organization: the one thing a reader checks before trusting an answer.
-- stale = no successful run within stale_after_seconds (twice the daemon's schedule period,
-- recorded in mirror_settings by the daemon; 1200 s, twice the default 10 minutes, until then).
CREATE VIEW `sync_status` AS
WITH organizations AS (
  SELECT organization FROM sync_runs
  UNION
  SELECT organization FROM sync_checkpoints
),
last_run AS (
  SELECT organization, MAX(id) AS id FROM sync_runs GROUP BY organization
),
last_success AS (
  SELECT organization, MAX(finished_at) AS finished_at FROM sync_runs WHERE status = 'succeeded' GROUP BY organization
),
last_failure AS (
  SELECT organization, MAX(id) AS id FROM sync_runs WHERE status = 'failed' GROUP BY organization
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
  END AS stale
FROM organizations o
LEFT JOIN sync_checkpoints c ON c.organization = o.organization
LEFT JOIN last_run lr ON lr.organization = o.organization
LEFT JOIN sync_runs r ON r.id = lr.id
LEFT JOIN last_success s ON s.organization = o.organization
LEFT JOIN last_failure lf ON lf.organization = o.organization
LEFT JOIN sync_runs f ON f.id = lf.id;
