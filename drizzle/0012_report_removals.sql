ALTER TABLE `report_sync_state` ADD `walk` integer;--> statement-breakpoint
ALTER TABLE `reports` ADD `last_seen_walk` integer;--> statement-breakpoint
ALTER TABLE `reports` ADD `missed_walk` integer;--> statement-breakpoint
ALTER TABLE `reports` ADD `removed_at` text;--> statement-breakpoint
ALTER TABLE `sync_runs` ADD `reports_removed` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Hand-added: rejected_proposals leaves out the reports the service no longer lists (removed_at),
-- and says whether the asset is blocked now for the proposal's organization: asset_blocked is 1
-- when that organization has a current threat with exactly the asset's content. (threat_id is
-- any mirrored threat with that content: perhaps removed, perhaps another organization's.)
DROP VIEW `rejected_proposals`;
--> statement-breakpoint
CREATE VIEW `rejected_proposals` AS
SELECT p.organization, p.report_id, p.id AS proposal_id, p.review_status, p.asset_id, p.asset_type,
       p.asset_content, p.asset_status, p.threat_id, r.created_at AS report_created_at, r.status AS report_status,
       EXISTS (SELECT 1 FROM current_threats t WHERE t.organization = p.organization AND t.content = p.asset_content) AS asset_blocked
  FROM report_proposals p
  JOIN reports r ON r.organization = p.organization AND r.id = p.report_id
 WHERE upper(p.review_status) = 'REJECTED' AND r.removed_at IS NULL;
