-- removal_checks.walked_run_id, walked_at: the run that began the walk of the window whose checks
-- are carried over, and when. Once the last check settles, the window's days enter the
-- sync_windows ledger as that walk's, at that time (its pages were read then, not when the checks
-- settled), so the reconciliation's rule holds of what the rows are. Rows of older versions have
-- neither: their window enters the ledger at carried_at.
ALTER TABLE `removal_checks` ADD `walked_run_id` integer;--> statement-breakpoint
ALTER TABLE `removal_checks` ADD `walked_at` text;