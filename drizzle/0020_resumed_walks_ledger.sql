-- sync_cursors.started_run_id: the run that began a window's walk (set with started_at on its first
-- page). A walk a later run resumes from the stored cursor enters the sync_windows ledger as that
-- run's, at started_at: its first pages were read then, and the reconciliation must see them so.
ALTER TABLE `sync_cursors` ADD `started_run_id` integer;