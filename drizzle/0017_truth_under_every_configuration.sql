-- The whole truth under every configuration (issue 40, docs/reconciliation.md, docs/schema.md):
--   removal_checks: removal checks a reconciliation's request budget did not cover in the run that
--     walked their window, carried over to the next run (the window is not walked again for them);
--   organization_threats.type: the type as the organization's own walks last returned it, by which
--     its scope and its removal candidates are decided (threats.type is shared: another
--     organization's walk may change it); filled from threats.type for the rows there are;
--   report_sync_state.full_walk_at: when the last walk of the whole reports list began, so that
--     reports older than the recent days are re-read every THREAT_MIRROR_RECONCILE_DAYS.
CREATE TABLE `removal_checks` (
	`organization` text NOT NULL,
	`threat_id` integer NOT NULL,
	`window_start` text NOT NULL,
	`window_end` text NOT NULL,
	`window_pages` integer NOT NULL,
	`asset_types` text,
	`carried_at` text NOT NULL,
	PRIMARY KEY(`organization`, `threat_id`)
);
--> statement-breakpoint
ALTER TABLE `organization_threats` ADD `type` text;--> statement-breakpoint
ALTER TABLE `report_sync_state` ADD `full_walk_at` text;--> statement-breakpoint
UPDATE `organization_threats` SET `type` = (SELECT `type` FROM `threats` WHERE `threats`.`id` = `organization_threats`.`threat_id`);
