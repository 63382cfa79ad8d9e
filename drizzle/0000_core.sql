CREATE TABLE `organization_threats` (
	`organization` text NOT NULL,
	`threat_id` integer NOT NULL,
	`first_seen_at` text NOT NULL,
	PRIMARY KEY(`organization`, `threat_id`),
	FOREIGN KEY (`threat_id`) REFERENCES `threats`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `organization_threats_threat` ON `organization_threats` (`threat_id`);--> statement-breakpoint
CREATE TABLE `rejected_records` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization` text NOT NULL,
	`run_id` integer NOT NULL,
	`raw` text NOT NULL,
	`reason` text NOT NULL,
	`seen_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `rejected_records_organization` ON `rejected_records` (`organization`,`id`);--> statement-breakpoint
CREATE TABLE `sync_checkpoints` (
	`organization` text PRIMARY KEY NOT NULL,
	`complete_through` text,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `sync_cursors` (
	`plan_id` integer NOT NULL,
	`window_start` text NOT NULL,
	`window_end` text NOT NULL,
	`next_page` text,
	`pages` integer DEFAULT 0 NOT NULL,
	`records` integer DEFAULT 0 NOT NULL,
	`completed_at` text,
	PRIMARY KEY(`plan_id`, `window_start`),
	FOREIGN KEY (`plan_id`) REFERENCES `sync_plans`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `sync_plans` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization` text NOT NULL,
	`mode` text NOT NULL,
	`range_start` text NOT NULL,
	`range_end` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sync_plans_organization` ON `sync_plans` (`organization`,`mode`);--> statement-breakpoint
CREATE TABLE `sync_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization` text NOT NULL,
	`mode` text NOT NULL,
	`status` text NOT NULL,
	`range_start` text NOT NULL,
	`range_end` text NOT NULL,
	`started_at` text NOT NULL,
	`finished_at` text,
	`pages` integer DEFAULT 0 NOT NULL,
	`retries` integer DEFAULT 0 NOT NULL,
	`threats_inserted` integer DEFAULT 0 NOT NULL,
	`threats_updated` integer DEFAULT 0 NOT NULL,
	`threats_rejected` integer DEFAULT 0 NOT NULL,
	`error` text
);
--> statement-breakpoint
CREATE INDEX `sync_runs_organization` ON `sync_runs` (`organization`,`id`);--> statement-breakpoint
CREATE TABLE `sync_windows` (
	`organization` text NOT NULL,
	`day` text NOT NULL,
	`completed_at` text NOT NULL,
	`run_id` integer NOT NULL,
	PRIMARY KEY(`organization`, `day`)
);
--> statement-breakpoint
CREATE TABLE `threats` (
	`id` integer PRIMARY KEY NOT NULL,
	`content` text NOT NULL,
	`type` text NOT NULL,
	`blocked_at` text NOT NULL,
	`first_seen_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `threats_blocked_at` ON `threats` (`blocked_at`);