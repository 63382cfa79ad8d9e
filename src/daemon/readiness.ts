// Whether the mirror's data can be trusted now: every organization synced, recently, and the file answers.
import type Database from 'better-sqlite3';
import { LAST_THREAT_RUNS_SQL } from '../db/read/status-reads.js';
import { errorMessage } from '../lib/errors.js';
import type { WalHealth } from './wal-health.js';

export interface OrganizationReadiness {
  readonly organization: string;
  readonly lastRunStatus: string | null;
  readonly lastSuccessAt: string | null;
  readonly lastError: string | null;
  readonly stale: boolean;
}

export interface Readiness {
  readonly ready: boolean;
  readonly reasons: readonly string[];
  readonly organizations: readonly OrganizationReadiness[];
  /** The WAL's size and how long readers have kept checkpoints from completing (daemon only). */
  readonly wal?: { readonly bytes: number; readonly checkpointsStarvedSeconds: number };
}

interface Row {
  organization: string;
  last_run_status: string | null;
  last_success_at: string | null;
  last_error: string | null;
}

export function checkReadiness(sqlite: Database.Database, organizations: readonly string[], now: Date, staleAfterSeconds: number): Readiness {
  let rows: Row[];
  try {
    // The last *finished* threats run: a run in progress says nothing yet about the data, and
    // reports are a separate stream that readers' threat answers do not depend on. Readiness is
    // about the incremental sync only: reconciliation runs (old days re-walked) are left out.
    rows = sqlite.prepare(LAST_THREAT_RUNS_SQL).all() as Row[];
  } catch (error) {
    return { ready: false, reasons: [`the database does not answer: ${errorMessage(error)}`], organizations: [] };
  }
  const byOrganization = new Map(rows.map((row) => [row.organization, row]));
  const reasons: string[] = [];
  const states = organizations.map((organization): OrganizationReadiness => {
    const row = byOrganization.get(organization);
    const lastSuccessAt = row?.last_success_at ?? null;
    const stale = lastSuccessAt === null || now.getTime() - Date.parse(lastSuccessAt) > staleAfterSeconds * 1000;
    if (lastSuccessAt === null) reasons.push(`organization "${organization}" has not synced successfully yet`);
    else if (stale) reasons.push(`organization "${organization}" last synced successfully at ${lastSuccessAt}, over ${staleAfterSeconds} s ago`);
    if (row?.last_run_status === 'failed') reasons.push(`organization "${organization}": the last run failed: ${row.last_error ?? 'unknown error'}`);
    return { organization, lastRunStatus: row?.last_run_status ?? null, lastSuccessAt, lastError: row?.last_error ?? null, stale };
  });
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
