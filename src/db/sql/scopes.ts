// Every write of organization_scopes (the asset types each organization mirrors now, and whether it
// is configured at all) and of organization_threats.out_of_scope (a threat of a type outside the
// scope, or of an organization no longer configured: hidden from every answer, not removed), as a
// scope change or a retirement decides it by each link's own type (a walk's links: threat-rows.ts).
// The change feed's counter is ThreatRows', so a hidden or shown threat moves in the feed through
// it (docs/configuration.md "Asset type scope" and "Organizations no longer configured").
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
 * every type) and its retirement make it. An UPDATE of just those, one by one, moves each in the feed.
 */
const MISPLACED_SQL = `SELECT o.threat_id FROM organization_threats o JOIN threats t ON t.id = o.threat_id
  WHERE o.organization = :organization
    AND o.out_of_scope IS NOT (CASE WHEN :retired THEN 1 WHEN :types IS NULL OR coalesce(o.type, t.type) IN (SELECT value FROM json_each(:types)) THEN 0 ELSE 1 END)`;

/** Every organization the file holds anything of: the organizations of sync_status, retired ones too. */
const HELD_SQL = 'SELECT organization FROM sync_runs UNION SELECT organization FROM sync_checkpoints UNION SELECT organization FROM organization_scopes';

const SCOPE_SQL = {
  recorded: 'SELECT asset_types, retired_at FROM organization_scopes WHERE organization = ?',
  record: `INSERT INTO organization_scopes (organization, asset_types, changed_at) VALUES (?, ?, ?)
           ON CONFLICT (organization) DO UPDATE SET asset_types = excluded.asset_types, changed_at = excluded.changed_at`,
  // A row made here (an organization mirrored before scopes existed) records every type, as no row did.
  retire: `INSERT INTO organization_scopes (organization, asset_types, changed_at, retired_at) VALUES (@organization, NULL, @now, @now)
           ON CONFLICT (organization) DO UPDATE SET retired_at = excluded.retired_at`,
  configure: 'UPDATE organization_scopes SET retired_at = NULL WHERE organization = ?',
  held: HELD_SQL,
  retired: 'SELECT organization FROM organization_scopes WHERE retired_at IS NOT NULL',
  misplaced: MISPLACED_SQL,
  flip: 'UPDATE organization_threats SET out_of_scope = 1 - out_of_scope WHERE organization = ? AND threat_id = ?',
};

/** Nothing is in scope for an organization no longer configured. */
const NO_TYPE: ScopeTypes = new Set<string>();

export class ScopeRows {
  readonly #sql: Statements<keyof typeof SCOPE_SQL>;
  /** Its change feed counter moves each threat hidden or shown. */
  readonly #threats: ThreatRows;
  /** The recorded scopes as sets, read once: every page asks (record() forgets the organization's). */
  readonly #types = new Map<string, ScopeTypes>();

  constructor(sqlite: Database, threats: ThreatRows) {
    this.#sql = prepareAll(sqlite, SCOPE_SQL);
    for (const statement of [this.#sql.held, this.#sql.retired, this.#sql.misplaced]) statement.pluck();
    this.#threats = threats;
  }

  /** The scope recorded; undefined when none is (the organization has mirrored every type). */
  recorded(organization: string): StoredScope | undefined {
    return this.#row(organization)?.asset_types;
  }

  /** The recorded scope's types; null: every type (also when none is recorded); none while the organization is retired. */
  typesOf(organization: string): ScopeTypes {
    let types = this.#types.get(organization);
    if (types === undefined) {
      const row = this.#row(organization);
      const scope = row?.asset_types ?? null;
      types = row?.retired_at ? NO_TYPE : scope === null ? null : new Set(scope.split(','));
      this.#types.set(organization, types);
    }
    return types;
  }

  /** Records the scope and (`reclassify`) hides or shows the organization's threats by it; returns how many changed side. */
  record(organization: string, scope: StoredScope, now: string, reclassify: boolean): number {
    this.#sql.record.run(organization, scope, now);
    return reclassify ? this.#reclassify(organization) : this.#forget(organization);
  }

  /** Every organization the file holds anything of, retired or not. */
  held(): string[] {
    return this.#sql.held.all() as string[];
  }

  /** The organizations no longer configured. */
  retired(): string[] {
    return this.#sql.retired.all() as string[];
  }

  /** No longer configured: every threat of it hidden (none removed); returns how many were hidden. */
  retire(organization: string, now: string): number {
    this.#sql.retire.run({ organization, now });
    return this.#reclassify(organization);
  }

  /** Configured again: its threats shown as its recorded scope says; returns how many were shown. */
  configure(organization: string): number {
    this.#sql.configure.run(organization);
    return this.#reclassify(organization);
  }

  #row(organization: string): { asset_types: StoredScope; retired_at: string | null } | undefined {
    return this.#sql.recorded.get(organization) as { asset_types: StoredScope; retired_at: string | null } | undefined;
  }

  /** Hides or shows the organization's threats by what is recorded of it now; returns how many changed side. */
  #reclassify(organization: string): number {
    this.#forget(organization);
    const row = this.#row(organization);
    const scope = row?.asset_types ?? null;
    const types = scope === null ? null : JSON.stringify(scope.split(','));
    const ids = this.#sql.misplaced.all({ organization, types, retired: row?.retired_at ? 1 : 0 }) as number[];
    for (const id of ids) {
      this.#sql.flip.run(organization, id);
      this.#threats.moveInFeed(id);
    }
    return ids.length;
  }

  #forget(organization: string): 0 {
    this.#types.delete(organization);
    return 0;
  }
}
