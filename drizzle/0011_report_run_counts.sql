ALTER TABLE `sync_runs` ADD `reports_inserted` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sync_runs` ADD `reports_updated` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sync_runs` ADD `reports_rejected` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Report runs written before this migration kept their counts in the threats_* columns: move them.
UPDATE `sync_runs` SET `reports_inserted` = `threats_inserted`, `reports_updated` = `threats_updated`, `reports_rejected` = `threats_rejected`,
  `threats_inserted` = 0, `threats_updated` = 0, `threats_rejected` = 0, `threats_removed` = 0
  WHERE `stream` = 'reports';
