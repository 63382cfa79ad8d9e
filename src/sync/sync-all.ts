// Runs every configured organization at once (threats, then reports when enabled); one failing
// never stops the others.
import type { OrganizationConfig } from '../config.js';
import { walkHistory } from './history.js';
import { reconcileOrganization } from './reconcile.js';
import type { RunSummary, SyncDeps, SyncRequest } from './run-contract.js';
import { syncThreats, widenScope } from './sync-threats.js';
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
      await applyConfiguredScope(deps, organization);
      const threats = await syncThreats(deps, organization, request, signal);
      // The added types over the days already mirrored: after the run's own range, never instead of it.
      const widened = request.mode === 'verify' || threats.status !== 'succeeded' ? [] : await widenScope(deps, organization, signal);
      // Reports are a stream of their own: they run after the threats, never instead of them.
      if (!deps.settings.mirrorReports || request.mode === 'verify' || signal.aborted) return [threats, ...widened];
      return [threats, ...widened, await syncReports(deps, organization, request, signal)];
    }),
  );
  if (request.mode !== 'incremental' || signal.aborted) return runs.flat();
  // The history walk and the reconciliation yield to incremental work: they start once every
  // organization's is done. The days the mirror lacks first, then the re-walks (history.ts says why).
  const afterwards = await Promise.all(
    runs.map(async ([threats], index) => {
      const organization = organizations[index];
      if (!threats || !organization || threats.status !== 'succeeded' || signal.aborted) return [];
      const history = await walkHistory(deps, organization, signal);
      if (signal.aborted) return [history];
      return [history, await reconcileOrganization(deps, organization, threats, signal)];
    }),
  );
  return [...runs.flat(), ...afterwards.flat().filter((summary) => summary !== undefined)];
}

/**
 * The configured scope, recorded before anything of the organization is walked, by every writer
 * (a run, a backfill, the daemon, verify): no walk then brings back a type the scope hides, and
 * one that the scope adds is walked over the days already mirrored (a widening plan).
 */
export async function applyConfiguredScope(deps: SyncDeps, organization: OrganizationConfig): Promise<void> {
  const applied = await deps.writer.call('applyScope', { organization: organization.name, assetTypes: organization.assetTypes ?? null, now: deps.clock().toISOString() });
  if (applied.moved > 0 || applied.widening !== null) {
    deps.logger.info(
      { organization: organization.name, previous: applied.previous ?? 'every type', assetTypes: organization.assetTypes ?? 'every type', moved: applied.moved, widening: applied.widening?.widening ?? null },
      'asset type scope changed: threats of types it no longer covers are hidden (not removed); added types are fetched over the days already mirrored',
    );
  }
}
