DROP INDEX `threats_change_seq`;--> statement-breakpoint
CREATE INDEX `threats_change_seq` ON `threats` (`change_seq`);