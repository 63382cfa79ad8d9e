// Runs every configured organization at once (threats, then reports when enabled); one failing
// never stops the others.
import type { OrganizationConfig } from '../config.js';
import { reconcileOrganization } from './reconcile.js';
import type { RunSummary, SyncDeps, SyncRequest } from './run-contract.js';
import { syncThreats } from './sync-threats.js';
import { syncReports } from './sync-reports.js';

export async function syncOrganizations(
  deps: SyncDeps,
  organizations: readonly OrganizationConfig[],
  request: SyncRequest,
  signal: AbortSignal,
): Promise<RunSummary[]> {
  // Each run logs a deprecation the service announces again, once.
  deps.api.notices?.startRun();
  // Concurrent, not one after another: each key has its own request budget, and organizations
  // that share a key share it, so running them together never exceeds what the service allows.
  const runs = await Promise.all(
    organizations.map(async (organization) => {
      const threats = await syncThreats(deps, organization, request, signal);
      // Reports are a stream of their own: they run after the threats, never instead of them.
      if (!deps.settings.mirrorReports || request.mode === 'verify' || signal.aborted) return [threats];
      return [threats, await syncReports(deps, organization, request, signal)];
    }),
  );
  if (request.mode !== 'incremental' || signal.aborted) return runs.flat();
  // Reconciliation yields to incremental work: it starts once every organization's is done.
  const reconciled = await Promise.all(
    runs.map(([threats], index) => {
      const organization = organizations[index];
      if (!threats || !organization || threats.status !== 'succeeded' || signal.aborted) return undefined;
      return reconcileOrganization(deps, organization, threats, signal);
    }),
  );
  return [...runs.flat(), ...reconciled.filter((summary) => summary !== undefined)];
}
