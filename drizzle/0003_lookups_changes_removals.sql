ALTER TABLE `organization_threats` ADD `removed_at` text;--> statement-breakpoint
ALTER TABLE `sync_runs` ADD `threats_removed` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sync_windows` ADD `window_start` text;--> statement-breakpoint
ALTER TABLE `sync_windows` ADD `window_end` text;--> statement-breakpoint
ALTER TABLE `sync_windows` ADD `pages` integer;--> statement-breakpoint
ALTER TABLE `sync_windows` ADD `records` integer;--> statement-breakpoint
ALTER TABLE `sync_windows` ADD `content_hash` text;--> statement-breakpoint
ALTER TABLE `threats` ADD `change_seq` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `threats` ADD `host` text;--> statement-breakpoint
ALTER TABLE `threats` ADD `registrable_domain` text;--> statement-breakpoint
ALTER TABLE `threats` ADD `address_namespace` text;--> statement-breakpoint
ALTER TABLE `threats` ADD `address_chain` text;--> statement-breakpoint
ALTER TABLE `threats` ADD `address` text;--> statement-breakpoint
ALTER TABLE `threats` ADD `email` text;--> statement-breakpoint
ALTER TABLE `threats` ADD `email_domain` text;--> statement-breakpoint
CREATE INDEX `threats_content` ON `threats` (`content`);--> statement-breakpoint
CREATE UNIQUE INDEX `threats_change_seq` ON `threats` (`change_seq`) WHERE change_seq > 0;--> statement-breakpoint
CREATE INDEX `threats_host` ON `threats` (`host`) WHERE host IS NOT NULL;--> statement-breakpoint
CREATE INDEX `threats_registrable_domain` ON `threats` (`registrable_domain`) WHERE registrable_domain IS NOT NULL;--> statement-breakpoint
CREATE INDEX `threats_address` ON `threats` (`address`) WHERE address IS NOT NULL;--> statement-breakpoint
CREATE INDEX `threats_email` ON `threats` (`email`) WHERE email IS NOT NULL;--> statement-breakpoint
CREATE INDEX `threats_email_domain` ON `threats` (`email_domain`) WHERE email_domain IS NOT NULL;