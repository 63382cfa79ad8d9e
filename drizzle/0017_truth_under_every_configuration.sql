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
