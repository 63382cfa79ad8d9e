// Reads what exports are made of: the threats currently blocked (no removed_at), from a read-only
// connection, inside one read transaction so every part of an export sees the same snapshot.
import type Database from 'better-sqlite3';
import type { Threat } from '../records.js';
import type { LookupFields } from '../url/lookup-fields.js';

/** A threat blocked now, with its lookup columns (all but the URL expression, which no export uses). */
export interface CurrentThreat extends Threat, Omit<LookupFields, 'urlExpression'> {
  readonly firstSeenAt: string;
  readonly updatedAt: string;
  readonly changeSeq: number;
  /** The configured organizations that block it now, sorted. */
  readonly organizations: readonly string[];
}

interface Row {
  id: number;
  content: string;
  type: string;
  blocked_at: string;
  first_seen_at: string;
  updated_at: string;
  change_seq: number;
  organizations: string;
  host: string | null;
  registrable_domain: string | null;
  address_namespace: string | null;
  address_chain: string | null;
  address: string | null;
  email: string | null;
  email_domain: string | null;
}

/** An organization's (or every organization's) current threats, as one consistent snapshot. */
export class ThreatSnapshot {
  readonly #sqlite: Database.Database;
  readonly #organization: string | undefined;
  /** The mirror's change feed position: it moves on every insert, change, removal and restoration. */
  readonly changeSeq: number;

  constructor(sqlite: Database.Database, organization: string | undefined) {
    this.#sqlite = sqlite;
    this.#organization = organization;
    // A read transaction: later statements see the file as it is now, whatever the writer commits.
    sqlite.exec('BEGIN');
    this.changeSeq = sqlite.prepare('SELECT coalesce(max(change_seq), 0) FROM threats').pluck().get() as number;
  }

  /** Current threats ordered by id; removed ones never appear. */
  *threats(): Generator<CurrentThreat> {
    const scope = this.#organization === undefined ? '' : ' AND o.organization = @organization';
    const statement = this.#sqlite.prepare(
      `SELECT t.id, t.content, t.type, t.blocked_at, t.first_seen_at, t.updated_at, t.change_seq,
              t.host, t.registrable_domain, t.address_namespace, t.address_chain, t.address, t.email, t.email_domain,
              group_concat(o.organization, ',') AS organizations
         FROM threats t JOIN organization_threats o ON o.threat_id = t.id
        WHERE o.removed_at IS NULL${scope}
        GROUP BY t.id ORDER BY t.id`,
    );
    const rows = statement.iterate(this.#organization === undefined ? {} : { organization: this.#organization }) as IterableIterator<Row>;
    for (const row of rows) {
      yield {
        id: row.id,
        content: row.content,
        type: row.type,
        blockedAt: row.blocked_at,
        firstSeenAt: row.first_seen_at,
        updatedAt: row.updated_at,
        changeSeq: row.change_seq,
        // group_concat's order is unspecified; organization names never contain a comma.
        organizations: row.organizations.split(',').sort(),
        host: row.host,
        registrableDomain: row.registrable_domain,
        addressNamespace: row.address_namespace,
        addressChain: row.address_chain,
        address: row.address,
        email: row.email,
        emailDomain: row.email_domain,
      };
    }
  }

  /** Ends the read transaction; the connection stays the caller's. */
  close(): void {
    if (this.#sqlite.inTransaction) this.#sqlite.exec('COMMIT');
  }
}
