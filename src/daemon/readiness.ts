// Whether the mirror's data can be trusted now: every organization synced, recently, and the file
// answers. The rule for each organization is the one lookups and `status` vouch by (lookup/sync-judgement.ts).
import type Database from 'better-sqlite3';
import { type SyncRecord, SyncHealthReads } from '../db/read/sync-health.js';
import { errorMessage } from '../lib/errors.js';
import { judgeSync, type OrganizationSync } from '../lookup/sync-judgement.js';
import type { WalHealth } from './wal-health.js';

export interface Readiness {
  readonly ready: boolean;
  readonly reasons: readonly string[];
  readonly organizations: readonly OrganizationSync[];
  /** The WAL's size and how long readers have kept checkpoints from completing (daemon only). */
  readonly wal?: { readonly bytes: number; readonly checkpointsStarvedSeconds: number };
}

/**
 * The last *finished* incremental threats run of each organization: a run in progress says nothing
 * yet about the data, reports are a separate stream that readers' threat answers do not depend
 * on, and reconciliation runs (old days re-walked) are left out.
 */
export function checkReadiness(sqlite: Database.Database, organizations: readonly string[], now: Date, staleAfterSeconds: number): Readiness {
  let records: SyncRecord[];
  try {
    const reads = new SyncHealthReads(sqlite);
    records = organizations.map((organization) => reads.record(organization));
  } catch (error) {
    return { ready: false, reasons: [`the database does not answer: ${errorMessage(error)}`], organizations: [] };
  }
  const states = judgeSync(records, now, staleAfterSeconds);
  const reasons = states.flatMap((state) => state.problems);
  return { ready: reasons.length === 0, reasons, organizations: states };
}

/** Adds a reason a part gives for not being ready (the allowlist file unusable, the serving thread down), if it gives one. */
export function withReason(readiness: Readiness, reason: string | undefined): Readiness {
  return reason === undefined ? readiness : { ...readiness, ready: false, reasons: [...readiness.reasons, reason] };
}

/** Adds the WAL's state, and a reason once readers have starved checkpoints past the threshold. */
export function withWalHealth(readiness: Readiness, wal: WalHealth, now: Date): Readiness {
  const reason = wal.reason(now);
  const state = { bytes: wal.walBytes(), checkpointsStarvedSeconds: Math.round(wal.starvedSeconds(now)) };
  if (reason === undefined) return { ...readiness, wal: state };
  return { ready: false, reasons: [...readiness.reasons, reason], organizations: readiness.organizations, wal: state };
}
