// An organization's asset type scope applied before its run (issue 30): recorded, its threats of
// types it no longer covers hidden (not removed) and those it covers again shown, a plan that
// walks only the added types over the days already mirrored, and the windows left midway started
// again under the new scope. One transaction, on the writer.
import type { Plan } from '../read/plan-reads.js';
import type { PlanRows } from '../sql/plans.js';
import { type ScopeRows, type StoredScope, storedScope } from '../sql/scopes.js';

export interface ScopeToApply {
  readonly organization: string;
  /** The configured scope; null: every type. */
  readonly assetTypes: readonly string[] | null;
  readonly now: string;
}

export interface AppliedScope {
  /** The scope recorded before; null: every type. */
  readonly previous: readonly string[] | null;
  /** Threats hidden or shown again by the change. */
  readonly moved: number;
  /** The plan that walks the added types over the days already mirrored; null when nothing was added. */
  readonly widening: Plan | null;
}

export function applyScope(scopes: ScopeRows, plans: PlanRows, { organization, assetTypes, now }: ScopeToApply): AppliedScope {
  const next = storedScope(assetTypes);
  const recorded = scopes.recorded(organization);
  // No row: the organization was mirrored before scopes existed, or never: every type.
  const previous = recorded ?? null;
  const previousTypes = previous === null ? null : previous.split(',');
  if (recorded !== undefined && previous === next) return { previous: previousTypes, moved: 0, widening: null };
  // Types a widening left unwalked stay to walk, if the new scope still has them.
  const unwalked = plans.dropWidening(organization);
  if (previous !== next) plans.restartCursors(organization);
  const added = addedTypes(previous, next, unwalked);
  // The first record of an unchanged "every type" has nothing to hide or show.
  const moved = scopes.record(organization, next, now, previous !== next);
  const days = added === null ? undefined : plans.mirroredDays(organization);
  const widening =
    added === null || days === undefined ? null : plans.create({ organization, mode: 'backfill', rangeStart: days.first, rangeEnd: days.last, createdAt: now, widening: added });
  return { previous: previousTypes, moved, widening };
}

/** What a widening walks: the added types (comma separated), '*' for every type; null when none. */
export function addedTypes(previous: StoredScope, next: StoredScope, unwalked: readonly string[]): string | null {
  if (next === null) return previous !== null || unwalked.length > 0 ? '*' : null;
  const had = previous === null ? null : new Set(previous.split(','));
  const pending = new Set(unwalked.flatMap((types) => (types === '*' ? next.split(',') : types.split(','))));
  const added = next.split(',').filter((type) => (had !== null && !had.has(type)) || pending.has(type));
  return added.length === 0 ? null : added.join(',');
}
