ALTER TABLE `threats` ADD `url_expression` text;--> statement-breakpoint
CREATE INDEX `threats_url_expression` ON `threats` (`url_expression`) WHERE url_expression IS NOT NULL;--> statement-breakpoint
-- Hand-added: URL and PAGE rows written before this column get it from the page-writer thread's
-- backfill of change_seq 0 rows (PageWriter.backfillLookups), which also gives each a new place in
-- the change feed: a reader copying the derived columns sees the new one.
UPDATE `threats` SET `change_seq` = 0 WHERE `type` IN ('URL', 'PAGE');
