-- The whole truth under every configuration (issue 40, docs/reconciliation.md, docs/schema.md):
--   removal_checks: removal checks a reconciliation's request budget did not cover in the run that
--     walked their window, carried over to the next run (the window is not walked again for them);
--   organization_threats.type: the type as the organization's own walks last returned it, by which
--     its scope and its removal candidates are decided (threats.type is shared: another
--     organization's walk may change it); filled from threats.type for the rows there are;
--   report_sync_state.full_walk_at: when the last walk of the whole reports list began, so that
--     reports older than the recent days are re-read every THREAT_MIRROR_RECONCILE_DAYS;
--   enforced_threats leaves out threats outside their organization's scope, as current_threats does
--     (an interim fix here: issue 37 defines "in force" once for both views).
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
--> statement-breakpoint
ALTER TABLE `organization_threats` ADD `type` text;--> statement-breakpoint
ALTER TABLE `report_sync_state` ADD `full_walk_at` text;--> statement-breakpoint
UPDATE `organization_threats` SET `type` = (SELECT `type` FROM `threats` WHERE `threats`.`id` = `organization_threats`.`threat_id`);--> statement-breakpoint
DROP VIEW `enforced_threats`;--> statement-breakpoint
CREATE VIEW `enforced_threats` AS
SELECT o.organization, t.id, t.content, t.type, t.blocked_at, t.host, t.registrable_domain,
       t.address_namespace, t.address_chain, t.address, t.email, t.email_domain,
       t.change_seq, o.first_seen_at, t.updated_at
  FROM organization_threats o
  JOIN threats t ON t.id = o.threat_id
 WHERE o.removed_at IS NULL AND o.out_of_scope = 0
   AND NOT EXISTS (SELECT 1 FROM allowlist a WHERE a.value = t.content)
   AND (t.email IS NULL OR NOT EXISTS (SELECT 1 FROM allowlist a WHERE a.email = t.email))
   AND (t.address IS NULL OR NOT EXISTS (
         SELECT 1 FROM allowlist a
          WHERE a.address = t.address
            AND (a.address_namespace IS NULL OR (a.address_namespace = t.address_namespace AND a.address_chain = t.address_chain))))
   AND (t.url_expression IS NULL
        OR NOT EXISTS (SELECT 1 FROM allowlist WHERE host IS NOT NULL)
        OR NOT EXISTS (
          WITH RECURSIVE parents(host) AS (
            SELECT substr(t.url_expression, 1, instr(t.url_expression, '/') - 1)
            UNION ALL
            SELECT substr(host, instr(host, '.') + 1) FROM parents WHERE instr(host, '.') > 0
          )
          SELECT 1 FROM parents p JOIN allowlist a ON a.host = p.host
           WHERE CASE
                   WHEN a.query IS NOT NULL THEN substr(t.url_expression, instr(t.url_expression, '/')) = a.path || '?' || a.query
                   ELSE substr(t.url_expression, instr(t.url_expression, '/'), length(a.path)) = a.path
                    AND (length(t.url_expression) - instr(t.url_expression, '/') + 1 = length(a.path)
                         OR substr(a.path, -1) = '/'
                         OR substr(t.url_expression, instr(t.url_expression, '/') + length(a.path), 1) IN ('/', '?'))
                 END));
