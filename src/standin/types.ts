// The stand-in's public shapes: what startStandin takes and what it hands back.
import type { StandinThreat } from './data.js';
import type { Fault, FaultController } from './faults.js';
import type { ListEvent, ThreatPatch } from './list-events.js';
import type { ReportsVariant, StandinReport } from './reports.js';

export interface StandinKeys {
  /** key → organization */
  readonly organizationKeys: Readonly<Record<string, string>>;
  /** key → memberships; only active ones grant access */
  readonly userKeys: Readonly<Record<string, ReadonlyArray<{ organization: string; active: boolean }>>>;
}

export interface StandinOptions {
  readonly host?: string;
  readonly port?: number;
  readonly threats?: readonly StandinThreat[];
  readonly keys: StandinKeys;
  /** "today" for the default date window. */
  readonly now?: () => Date;
  readonly latencyMs?: number;
  readonly seed?: number;
  readonly reports?: readonly StandinReport[];
  /** Which of the documented response shapes GET /organization/reports answers with. */
  readonly reportsVariant?: ReportsVariant;
  /** The 'nextCursor' shape's numeric cursors are the offset plus this (default 0); beyond 2^53 tests a client's digits. */
  readonly reportsCursorBase?: bigint;
  /** false: a deployment without GET /organization/reports (404). */
  readonly reportsEnabled?: boolean;
  /** Serve every blockedAt at this UTC offset ("+05:00", "-09:30"): the same instants in another form. */
  readonly blockedAtOffset?: string;
}

export interface RequestRecord {
  readonly at: number;
  readonly key: string;
  readonly path: string;
  readonly body: unknown;
  readonly status: number;
  readonly fault?: Fault['kind'];
  readonly threats: number;
  /** The ids of a page of threats served whole, as the service sends it (no fault bent it). */
  readonly ids?: readonly number[];
}

export interface StandinStats {
  readonly requests: readonly RequestRecord[];
  inFlight(key?: string): number;
  maxInFlight(key?: string): number;
  /** Requests that arrived before a Retry-After given to their key had passed. */
  earlyRequests(key?: string): number;
  reset(): void;
}

export interface Standin {
  readonly url: string;
  readonly faults: FaultController;
  readonly stats: StandinStats;
  addThreats(threats: readonly StandinThreat[]): void;
  removeThreats(ids: readonly number[]): void;
  /** Changes a threat: its content, type, day (blockedAt) or organization. */
  updateThreat(id: number, patch: ThreatPatch): void;
  /** A change or a fault timed against the requests of a walk, e.g. an unblock once page 2 is served. */
  onListRequest(event: ListEvent): void;
  /** Everything a key may see, all dates, by id: what a complete mirror holds. */
  threatsVisibleTo(key: string): StandinThreat[];
  setLatency(ms: number): void;
  /** From now on serve every blockedAt at this UTC offset ("+05:00"); null: as stored. */
  setBlockedAtOffset(offset: string | null): void;
  /** Reports of an organization's key, newest first, as stored (not in a response shape). */
  reportsOf(organization: string): StandinReport[];
  updateReport(id: number | bigint, change: (report: StandinReport) => void): void;
  addReports(reports: readonly StandinReport[]): void;
  /** Reports deleted upstream: no longer listed. */
  removeReports(ids: ReadonlyArray<number | bigint>): void;
  setReportsVariant(variant: ReportsVariant): void;
  setReportsEnabled(enabled: boolean): void;
  /** Resolves once `count` requests have arrived in all. */
  waitForRequests(count: number): Promise<void>;
  /** Resolves once no request is in flight (each answered and recorded). */
  waitUntilIdle(): Promise<void>;
  close(): Promise<void>;
}
