-- Full-text search over threat content: `SELECT rowid FROM threats_fts WHERE threats_fts MATCH 'wallet'`.
-- An external-content index (the text lives once, in threats) kept in step by triggers, so
-- every writer path (sync, verify, a repair by hand) updates it in the same transaction.
CREATE VIRTUAL TABLE `threats_fts` USING fts5(content, content='threats', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
--> statement-breakpoint
CREATE TRIGGER `threats_fts_insert` AFTER INSERT ON `threats` BEGIN
  INSERT INTO threats_fts (rowid, content) VALUES (new.id, new.content);
END;
--> statement-breakpoint
CREATE TRIGGER `threats_fts_delete` AFTER DELETE ON `threats` BEGIN
  INSERT INTO threats_fts (threats_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
--> statement-breakpoint
CREATE TRIGGER `threats_fts_update` AFTER UPDATE OF content ON `threats` BEGIN
  INSERT INTO threats_fts (threats_fts, rowid, content) VALUES ('delete', old.id, old.content);
  INSERT INTO threats_fts (rowid, content) VALUES (new.id, new.content);
END;
--> statement-breakpoint
-- Rows written before this migration.
INSERT INTO threats_fts (rowid, content) SELECT id, content FROM threats;
--> statement-breakpoint
-- What each organization has blocked now: its threats not marked removed.
CREATE VIEW `current_threats` AS
SELECT o.organization, t.id, t.content, t.type, t.blocked_at, t.host, t.registrable_domain,
       t.address_namespace, t.address_chain, t.address, t.email, t.email_domain,
       t.change_seq, o.first_seen_at, t.updated_at
  FROM organization_threats o
  JOIN threats t ON t.id = o.threat_id
 WHERE o.removed_at IS NULL;
