// Whether the mirror can vouch for what it holds of an organization now: the one rule behind
// lookup's and /v1/lookup's verdicts, `status`'s exit code and /readyz. An organization is
// synced and fresh when it has a successful incremental run, its last finished incremental run
// did not fail, and its last success is no older than the staleness threshold (twice the
// longest gap of the daemon's schedule). Anything else is a reason the mirror cannot vouch.
import { retiredMessage } from '../db/read/answered-organizations.js';
import type { SyncHealthReads, SyncRecord } from '../db/read/sync-health.js';

/** fresh, or the first reason it is not: retired (no longer configured), never synced, its last run failed, or its last success too old. */
export type SyncState = 'fresh' | 'retired' | 'never_synced' | 'failing' | 'stale';

export interface OrganizationSync extends SyncRecord {
  readonly state: SyncState;
  readonly stale: boolean;
  /** Why the mirror cannot vouch for this organization now, each said once; empty when it can. */
  readonly problems: readonly string[];
}

/** The judgement of each of `organizations` at `now`, against `staleAfterSeconds`. */
export function judgeSync(records: ReadonlyArray<SyncRecord>, now: Date, staleAfterSeconds: number): OrganizationSync[] {
  return records.map((record) => {
    const { organization, lastSuccessAt, lastRunStatus, retiredAt } = record;
    const problems: string[] = [];
    // A reader configured with it, the writer not: its threats are hidden, so nothing about it can be vouched for.
    if (retiredAt !== null) problems.push(retiredMessage(organization, retiredAt));
    // A success recorded ahead of this clock (a writer with THREAT_MIRROR_NOW ahead) is not old.
    const stale = lastSuccessAt === null || now.getTime() - Date.parse(lastSuccessAt) > staleAfterSeconds * 1000;
    if (lastSuccessAt === null) problems.push(`organization "${organization}" has not synced successfully yet`);
    else if (stale) problems.push(`organization "${organization}" last synced successfully at ${lastSuccessAt}, over ${staleAfterSeconds} s ago`);
    const failing = lastRunStatus === 'failed';
    if (failing) problems.push(`organization "${organization}": the last run failed: ${record.lastError ?? 'unknown error'}`);
    const state: SyncState = retiredAt !== null ? 'retired' : lastSuccessAt === null ? 'never_synced' : failing ? 'failing' : stale ? 'stale' : 'fresh';
    return { ...record, state, stale, problems };
  });
}

/** Reads and judges `organizations` in one go. */
export function readSync(reads: SyncHealthReads, organizations: readonly string[], now: Date): OrganizationSync[] {
  return judgeSync(
    organizations.map((organization) => reads.record(organization)),
    now,
    reads.staleAfterSeconds(),
  );
}
