// The engine of `threat-mirror verify` (commands/verify.ts): re-fetch closed days (of the configured
// scope, recorded as any run records it), compare them with the ledger and the rows, find the days
// that drifted, and repair them (the re-fetch is a full walk, sync-threats.ts: it upserts what
// differs and marks removed what the service, asked again, lists nowhere; see removal-check.ts).
import type { OrganizationConfig } from '../config.js';
import { addToDayDigests, type DayDigest, digestHex, emptyDigest } from '../db/content-hash.js';
import { addDays, daysBetween } from '../lib/days.js';
import type { RunSummary, SyncDeps } from './run-contract.js';
import { applyConfiguredScope } from './sync-all.js';
import { syncThreats } from './sync-threats.js';

export interface Side {
  readonly records: number | null;
  readonly hash: string | null;
}

export interface DayDrift {
  readonly organization: string;
  readonly day: string;
  readonly service: Side;
  /** The mirror's rows before the repair. */
  readonly mirror: Side;
  /** The ledger's record of the day before the repair; nulls when the day was never completed. */
  readonly ledger: Side;
  /** The mirror's rows after the repair equal the service's. */
  readonly repaired: boolean;
}

export interface VerifyResult {
  readonly summary: RunSummary;
  readonly days: number;
  readonly drift: readonly DayDrift[];
}

export async function verifyOrganization(deps: SyncDeps, organization: OrganizationConfig, from: string, to: string, signal: AbortSignal): Promise<VerifyResult> {
  const { ledger: ledgerReads } = deps.reads;
  const name = organization.name;
  // The scope configured, as every writer applies it: the walk below asks for its types only.
  await applyConfiguredScope(deps, organization);
  const ledger = ledgerReads.recordedDays(name, from, to);
  const before = ledgerReads.currentDigests(name, from, to, organization.assetTypes);
  const service = new Map<string, DayDigest>();
  const summary = await syncThreats(
    deps,
    organization,
    {
      mode: 'verify',
      from,
      to,
      onPage: (threats) => {
        for (const threat of threats) {
          const day = threat.blockedAt.slice(0, 10);
          if (day >= from && day <= to) addToDayDigests(service, threat);
        }
      },
      // A window the list shifted under is walked again: only its last walk tells what the service holds.
      onWalkStart: (windowStart, windowEnd) => {
        for (const day of service.keys()) if (day >= windowStart && day <= windowEnd) service.delete(day);
      },
    },
    signal,
  );
  const days = daysBetween(from, to);
  if (summary.status !== 'succeeded') return { summary, days, drift: [] };
  const after = ledgerReads.currentDigests(name, from, to, organization.assetTypes);
  const drift: DayDrift[] = [];
  const scope = organization.assetTypes === undefined ? null : [...organization.assetTypes].sort().join(',');
  for (let offset = 0; offset < days; offset += 1) {
    const day = addDays(from, offset);
    const want = side(service.get(day));
    const had = side(before.get(day));
    // A digest is compared only with a walk of the same scope: one recorded under another says nothing.
    const recorded = ledger.get(day);
    const comparable = recorded === undefined || recorded.assetTypes === scope;
    const ledgerSide: Side = comparable ? { records: recorded?.records ?? null, hash: recorded?.contentHash ?? null } : { records: null, hash: null };
    if (want.hash === had.hash && (!comparable || (want.hash === ledgerSide.hash && want.records === ledgerSide.records))) continue;
    drift.push({ organization: name, day, service: want, mirror: had, ledger: ledgerSide, repaired: side(after.get(day)).hash === want.hash });
  }
  return { summary, days, drift };
}

function side(digest: DayDigest | undefined): { records: number; hash: string } {
  const value = digest ?? emptyDigest();
  return { records: value.records, hash: digestHex(value) };
}
