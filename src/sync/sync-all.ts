// Runs every configured organization at once; one failing never stops the others.
import type { OrganizationConfig } from '../config.js';
import { type RunSummary, type SyncDeps, type SyncRequest, syncOrganization } from './sync-organization.js';

export async function syncOrganizations(
  deps: SyncDeps,
  organizations: readonly OrganizationConfig[],
  request: SyncRequest,
  signal: AbortSignal,
): Promise<RunSummary[]> {
  // Concurrent, not one after another: each key has its own request budget, and organizations
  // that share a key share it, so running them together never exceeds what the service allows.
  return Promise.all(organizations.map((organization) => syncOrganization(deps, organization, request, signal)));
}
