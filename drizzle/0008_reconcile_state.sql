CREATE TABLE `reconcile_state` (
	`organization` text PRIMARY KEY NOT NULL,
	`cycle_completed_at` text,
	`updated_at` text NOT NULL
);
