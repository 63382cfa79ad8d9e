-- One meaning for every answer (issue 37, docs/schema.md):
--   threats.export_host, threats.export_left_out: what a URL or PAGE threat gives the host formats
--     and the zone (the DNS name it blocks as a whole, or why none), derived with the other lookup
--     columns by the one URL reader (src/url/web-url.ts). Filled for stored rows at the writer's
--     next start (the lookup rules' version 3: db/writer/lookup-rules-upgrade.ts).
--   in_force: "in force", defined once: an organization's link to a threat, neither removed nor
--     outside its scope. current_threats is built on it, enforced_threats on current_threats (so
--     that it respects the scope too: before, a threat hidden by a narrowed scope stayed in it).
ALTER TABLE `threats` ADD `export_host` text;--> statement-breakpoint
ALTER TABLE `threats` ADD `export_left_out` text;--> statement-breakpoint
DROP VIEW `enforced_threats`;--> statement-breakpoint
DROP VIEW `current_threats`;--> statement-breakpoint
CREATE VIEW `in_force` AS
SELECT organization, threat_id, first_seen_at
  FROM organization_threats
 WHERE removed_at IS NULL AND out_of_scope = 0;--> statement-breakpoint
-- What each organization has blocked now: its threats in force.
CREATE VIEW `current_threats` AS
SELECT f.organization, t.id, t.content, t.type, t.blocked_at, t.host, t.registrable_domain,
       t.address_namespace, t.address_chain, t.address, t.email, t.email_domain,
       t.change_seq, f.first_seen_at, t.updated_at
  FROM in_force f
  JOIN threats t ON t.id = f.threat_id;--> statement-breakpoint
-- What each organization enforces now: current_threats without what THREAT_MIRROR_ALLOWLIST
-- allows, by the rules of src/allowlist/allow-matcher.ts (docs/schema.md); the same columns as
-- current_threats. A threat is allowed by an entry whose text is its content; by a host or URL
-- entry on its host or a parent of it whose path covers its path (Safe Browsing's rule: that path
-- and below; with a query, that URL only); by an address entry with its address (a bare entry on
-- any chain); by an e-mail entry with its e-mail. Each is an index search of the allowlist: a URL
-- threat's host and each of its parents are looked up by name.
CREATE VIEW `enforced_threats` AS
SELECT c.*
  FROM current_threats c
  JOIN threats t ON t.id = c.id
 WHERE NOT EXISTS (SELECT 1 FROM allowlist a WHERE a.value = t.content)
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
