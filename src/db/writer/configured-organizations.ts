// The organizations a writer is configured with (THREAT_MIRROR_ORG / THREAT_MIRROR_ORGS), applied
// at its start: one the file holds that the configuration leaves out is retired (its threats
// hidden from every answer, kept: no walk of it looks again, so the file could no longer vouch for
// them), and a retired one configured again is shown as its recorded scope says, its runs going
// on from its checkpoints. One transaction, on the writer (docs/configuration.md "Organizations no longer configured").
import type { ScopeRows } from '../sql/scopes.js';

export interface OrganizationsToConfigure {
  /** Every configured organization, whichever --org a command selects. */
  readonly organizations: readonly string[];
  readonly now: string;
}

export interface ConfiguredOrganizations {
  /** Held but left out of the configuration: each newly retired, and how many of its threats were hidden. */
  readonly retired: ReadonlyArray<{ readonly organization: string; readonly hidden: number }>;
  /** Retired before and configured again: how many of its threats were shown. */
  readonly returned: ReadonlyArray<{ readonly organization: string; readonly shown: number }>;
}

export function configureOrganizations(scopes: ScopeRows, { organizations, now }: OrganizationsToConfigure): ConfiguredOrganizations {
  const configured = new Set(organizations);
  const retiredBefore = new Set(scopes.retired());
  const returned = [...retiredBefore].filter((organization) => configured.has(organization)).map((organization) => ({ organization, shown: scopes.configure(organization) }));
  const retired = scopes
    .held()
    .filter((organization) => !configured.has(organization) && !retiredBefore.has(organization))
    .map((organization) => ({ organization, hidden: scopes.retire(organization, now) }));
  return { retired, returned };
}
