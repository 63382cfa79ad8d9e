// The records the service sends, once validated: the vocabulary api/ produces and db/ stores.
// A leaf: it imports nothing, so api/ and db/ share it without importing each other.

/** The AssetType values of the service's interface (section 2.4); the service adds platforms. */
export const DOCUMENTED_ASSET_TYPES: ReadonlySet<string> = new Set([
  'URL', 'PAGE', 'ADDRESS', 'EMAIL', 'IPFS',
  ...Array.from({ length: 35 }, (_, index) => `PLATFORM_${String(index + 1).padStart(2, '0')}`),
]);

/** Whether a threat is of a scope's types (every threat when the scope is every type: undefined). */
export function ofAssetTypes(assetTypes: readonly string[] | undefined): (threat: { readonly type: string }) => boolean {
  if (assetTypes === undefined) return () => true;
  const types = new Set(assetTypes);
  return (threat) => types.has(threat.type);
}

/** One ThreatResult of POST /threats/list. */
export interface Threat {
  readonly id: number;
  readonly content: string;
  readonly type: string;
  /** The service's ISO 8601 timestamp as its UTC instant, YYYY-MM-DDTHH:MM:SS.sssZ (threat-record.ts utcInstantOf). */
  readonly blockedAt: string;
}

/** A record that failed validation: kept in rejected_records, never thrown. */
export interface RejectedRecord {
  /** The record's JSON text as the service sent it (every digit of its numbers), redacted. */
  readonly raw: string;
  readonly reason: string;
}

/** One proposal of a report, read tolerantly (the service's documentation disagrees with itself). */
export interface ProposalRecord {
  readonly id: string;
  readonly reviewStatus: string | null;
  readonly assetId: string | null;
  readonly assetType: string | null;
  readonly assetContent: string | null;
  readonly assetStatus: string | null;
}

/** One report of GET /organization/reports. */
export interface ReportRecord {
  /** Text, whether the service sent a number or a string. */
  readonly id: string;
  readonly createdAt: string | null;
  readonly status: string | null;
  readonly proposals: readonly ProposalRecord[];
  /** The report's JSON text exactly as received (redacted). */
  readonly raw: string;
}
