// Which organizations the file answers for: those it holds threats or runs of, less those retired
// (no longer configured by the last writer: docs/configuration.md "Organizations no longer
// configured"). One definition for every reader that takes an organization's name (lookup, status,
// export, the feeds); sync_status (and a snapshot's manifest, read from it) leaves them out too.
import { type Database, prepareIfMigrated } from '../sqlite.js';

/** The organizations retired: their threats hidden from every answer (organization_scopes.retired_at). */
export const RETIRED_ORGANIZATIONS_SQL = 'SELECT organization FROM organization_scopes WHERE retired_at IS NOT NULL';

/** When the organization was retired (NULL or no row: it is not); a file from before retirements (migration 0019) has no such column. */
export const RETIRED_AT_SQL = 'SELECT retired_at FROM organization_scopes WHERE organization = ?';

/** What the file is to an organization asked about by name. */
export type OrganizationStanding = { readonly held: false } | { readonly held: true; readonly retiredAt: string | null };

export function organizationStanding(sqlite: Database, organization: string): OrganizationStanding {
  const held = sqlite.prepare('SELECT 1 FROM organization_threats WHERE organization = @organization UNION ALL SELECT 1 FROM sync_runs WHERE organization = @organization LIMIT 1').get({ organization });
  if (held === undefined) return { held: false };
  const retiredAt = prepareIfMigrated(sqlite, RETIRED_AT_SQL)?.pluck().get(organization) as string | null | undefined;
  return { held: true, retiredAt: retiredAt ?? null };
}

/** Why a reader has nothing to give for this organization by name (unknown to the file, or retired); undefined when it has. */
export function organizationProblem(sqlite: Database, organization: string): string | undefined {
  const standing = organizationStanding(sqlite, organization);
  if (!standing.held) return `the mirror holds nothing for organization "${organization}"`;
  return standing.retiredAt === null ? undefined : retiredMessage(organization, standing.retiredAt);
}

/** Why a reader answers nothing for a retired organization, for its message. */
export function retiredMessage(organization: string, retiredAt: string): string {
  return `organization "${organization}" is no longer configured (retired by a writer at ${retiredAt}): the mirror answers for none of its threats; configure it again (THREAT_MIRROR_ORGS) to show them`;
}

export interface RetiredOrganization {
  readonly organization: string;
  readonly retiredAt: string;
  /** Its threats the file keeps, hidden from every answer. */
  readonly threats: number;
}

/** The organizations retired, by name, for `status`. */
export function readRetiredOrganizations(sqlite: Database): RetiredOrganization[] {
  const retired = prepareIfMigrated(
    sqlite,
    `SELECT s.organization, s.retired_at AS retiredAt, (SELECT count(*) FROM organization_threats o WHERE o.organization = s.organization) AS threats
       FROM organization_scopes s WHERE s.retired_at IS NOT NULL ORDER BY s.organization`,
  );
  return (retired?.all() ?? []) as RetiredOrganization[];
}
