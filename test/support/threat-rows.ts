// Threat rows written straight into a mirror by tests that play the page writer's part, with every
// lookup and export column derived as the writer derives it (src/url/lookup-fields.ts).
import type { Database } from '../../src/db/sqlite.js';
import { deriveLookupFields } from '../../src/url/lookup-fields.js';
import { openWritableMirrorSync } from './writable-mirror.js';

export interface ThreatRowInput {
  readonly id: number;
  readonly content: string;
  readonly type: string;
  readonly blockedAt: string;
  readonly stamp: string;
  readonly changeSeq: number;
}

/** A function that inserts one threat row with its derived columns (prepared once). */
export function threatRowWriter(sqlite: Database): (row: ThreatRowInput) => void {
  const insert = sqlite.prepare(
    `INSERT INTO threats (id, content, type, blocked_at, first_seen_at, updated_at, change_seq, host, registrable_domain, address_namespace,
       address_chain, address, email, email_domain, url_expression, export_host, export_left_out)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  return ({ id, content, type, blockedAt, stamp, changeSeq }) => {
    const f = deriveLookupFields(type, content);
    insert.run(id, content, type, blockedAt, stamp, stamp, changeSeq, f.host, f.registrableDomain, f.addressNamespace, f.addressChain, f.address, f.email, f.emailDomain, f.urlExpression, f.exportHost, f.exportLeftOut);
  };
}

/** Writes `rows` into the mirror at `dbPath` (migrated first if new) in one transaction, each listed by `organization` since its stamp. */
export function writeThreatRows(dbPath: string, rows: readonly ThreatRowInput[], organization = 'acme'): void {
  const opened = openWritableMirrorSync(dbPath);
  try {
    const insert = threatRowWriter(opened.sqlite);
    const link = opened.sqlite.prepare('INSERT INTO organization_threats (organization, threat_id, first_seen_at) VALUES (?, ?, ?)');
    opened.sqlite.transaction(() => {
      for (const row of rows) {
        insert(row);
        link.run(organization, row.id, row.stamp);
      }
    })();
  } finally {
    opened.close();
  }
}
