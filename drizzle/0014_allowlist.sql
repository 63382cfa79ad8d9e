CREATE TABLE `allowlist` (
	`line` integer PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`kind` text NOT NULL,
	`reason` text,
	`host` text,
	`path` text,
	`query` text,
	`address` text,
	`address_namespace` text,
	`address_chain` text,
	`email` text
);
--> statement-breakpoint
CREATE INDEX `allowlist_value` ON `allowlist` (`value`);--> statement-breakpoint
CREATE INDEX `allowlist_host` ON `allowlist` (`host`) WHERE host IS NOT NULL;--> statement-breakpoint
CREATE INDEX `allowlist_address` ON `allowlist` (`address`) WHERE address IS NOT NULL;--> statement-breakpoint
CREATE INDEX `allowlist_email` ON `allowlist` (`email`) WHERE email IS NOT NULL;--> statement-breakpoint
-- What each organization enforces now: current_threats without what THREAT_MIRROR_ALLOWLIST
-- allows, by the rules of src/allowlist/allow-matcher.ts (docs/schema.md); the same columns as
-- current_threats. A threat is allowed by an entry whose text is its content; by a host or URL
-- entry on its host or a parent of it whose path covers its path (Safe Browsing's rule: that path
-- and below; with a query, that URL only); by an address entry with its address (a bare entry on
-- any chain); by an e-mail entry with its e-mail.
CREATE VIEW `enforced_threats` AS
SELECT o.organization, t.id, t.content, t.type, t.blocked_at, t.host, t.registrable_domain,
       t.address_namespace, t.address_chain, t.address, t.email, t.email_domain,
       t.change_seq, o.first_seen_at, t.updated_at
  FROM organization_threats o
  JOIN (SELECT t.*,
               substr(t.url_expression, 1, instr(t.url_expression, '/') - 1) AS url_host,
               substr(t.url_expression, instr(t.url_expression, '/')) AS url_rest
          FROM threats t) t ON t.id = o.threat_id
 WHERE o.removed_at IS NULL
   AND NOT EXISTS (SELECT 1 FROM allowlist a WHERE a.value = t.content)
   AND (t.email IS NULL OR NOT EXISTS (SELECT 1 FROM allowlist a WHERE a.email = t.email))
   AND (t.address IS NULL OR NOT EXISTS (
         SELECT 1 FROM allowlist a
          WHERE a.address = t.address
            AND (a.address_namespace IS NULL OR (a.address_namespace = t.address_namespace AND a.address_chain = t.address_chain))))
   AND (t.url_expression IS NULL OR NOT EXISTS (
         SELECT 1 FROM allowlist a
          WHERE a.host IS NOT NULL
            AND (a.host = t.url_host OR substr(t.url_host, -length(a.host) - 1) = '.' || a.host)
            AND CASE
                  WHEN a.query IS NOT NULL THEN t.url_rest = a.path || '?' || a.query
                  ELSE substr(t.url_rest, 1, length(a.path)) = a.path
                   AND (length(t.url_rest) = length(a.path)
                        OR substr(a.path, -1) = '/'
                        OR substr(t.url_rest, length(a.path) + 1, 1) IN ('/', '?'))
                END));
