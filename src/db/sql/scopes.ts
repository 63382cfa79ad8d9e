// Every write of organization_scopes (the asset types each organization mirrors now) and of
// organization_threats.out_of_scope (a threat of a type outside it: hidden from every answer, not
// removed), as a scope change decides it by each link's own type (a walk's links: threat-rows.ts). The change feed's counter is ThreatRows', so a hidden or shown threat moves in the feed
// through it (docs/configuration.md "Asset type scope").
import { type Database, prepareAll, type Statements } from '../sqlite.js';
import type { ScopeTypes, ThreatRows } from './threat-rows.js';

/** A scope as stored: the types sorted and comma separated; null: every type. */
export type StoredScope = string | null;

export function storedScope(assetTypes: readonly string[] | undefined | null): StoredScope {
  return assetTypes === undefined || assetTypes === null ? null : [...assetTypes].sort().join(',');
}

export function scopeTypes(stored: StoredScope): string[] | undefined {
  return stored === null ? undefined : stored.split(',');
}

/**
 * The organization's threats whose out_of_scope is not what the scope (a JSON array, or null for
 * every type) makes it. An UPDATE of just those, one by one, moves each in the feed.
 */
const MISPLACED_SQL = `SELECT o.threat_id FROM organization_threats o JOIN threats t ON t.id = o.threat_id
  WHERE o.organization = :organization
    AND o.out_of_scope IS NOT (CASE WHEN :types IS NULL OR coalesce(o.type, t.type) IN (SELECT value FROM json_each(:types)) THEN 0 ELSE 1 END)`;

const SCOPE_SQL = {
  recorded: 'SELECT asset_types FROM organization_scopes WHERE organization = ?',
  record: `INSERT INTO organization_scopes (organization, asset_types, changed_at) VALUES (?, ?, ?)
           ON CONFLICT (organization) DO UPDATE SET asset_types = excluded.asset_types, changed_at = excluded.changed_at`,
  misplaced: MISPLACED_SQL,
  flip: 'UPDATE organization_threats SET out_of_scope = 1 - out_of_scope WHERE organization = ? AND threat_id = ?',
};

export class ScopeRows {
  readonly #sql: Statements<keyof typeof SCOPE_SQL>;
  /** Its change feed counter moves each threat hidden or shown. */
  readonly #threats: ThreatRows;
  /** The recorded scopes as sets, read once: every page asks (record() forgets the organization's). */
  readonly #types = new Map<string, ScopeTypes>();

  constructor(sqlite: Database, threats: ThreatRows) {
    this.#sql = prepareAll(sqlite, SCOPE_SQL);
    this.#sql.recorded.pluck();
    this.#sql.misplaced.pluck();
    this.#threats = threats;
  }

  /** The scope recorded; undefined when none is (the organization has mirrored every type). */
  recorded(organization: string): StoredScope | undefined {
    return this.#sql.recorded.get(organization) as StoredScope | undefined;
  }

  /** The recorded scope's types; null: every type (also when none is recorded). */
  typesOf(organization: string): ScopeTypes {
    let types = this.#types.get(organization);
    if (types === undefined) {
      const recorded = this.recorded(organization) ?? null;
      types = recorded === null ? null : new Set(recorded.split(','));
      this.#types.set(organization, types);
    }
    return types;
  }

  /** Records the scope and (`reclassify`) hides or shows the organization's threats by it; returns how many changed side. */
  record(organization: string, scope: StoredScope, now: string, reclassify: boolean): number {
    this.#sql.record.run(organization, scope, now);
    this.#types.delete(organization);
    if (!reclassify) return 0;
    const types = scope === null ? null : JSON.stringify(scope.split(','));
    const ids = this.#sql.misplaced.all({ organization, types }) as number[];
    for (const id of ids) {
      this.#sql.flip.run(organization, id);
      this.#threats.moveInFeed(id);
    }
    return ids.length;
  }
}
