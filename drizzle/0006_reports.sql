CREATE TABLE `report_proposals` (
	`organization` text NOT NULL,
	`report_id` text NOT NULL,
	`id` text NOT NULL,
	`review_status` text,
	`asset_id` text,
	`asset_type` text,
	`asset_content` text,
	`asset_status` text,
	`threat_id` integer,
	PRIMARY KEY(`organization`, `report_id`, `id`)
);
--> statement-breakpoint
CREATE INDEX `report_proposals_threat` ON `report_proposals` (`threat_id`);--> statement-breakpoint
CREATE INDEX `report_proposals_asset_content` ON `report_proposals` (`asset_content`);--> statement-breakpoint
CREATE TABLE `report_sync_state` (
	`organization` text PRIMARY KEY NOT NULL,
	`mode` text,
	`range_start` text,
	`range_end` text,
	`next_cursor` text,
	`disabled_reason` text,
	`disabled_until` text,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `reports` (
	`organization` text NOT NULL,
	`id` text NOT NULL,
	`created_at` text,
	`status` text,
	`raw` text NOT NULL,
	`first_seen_at` text NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`organization`, `id`)
);
--> statement-breakpoint
CREATE INDEX `reports_created_at` ON `reports` (`organization`,`created_at`);--> statement-breakpoint
ALTER TABLE `sync_runs` ADD `stream` text DEFAULT 'threats' NOT NULL;