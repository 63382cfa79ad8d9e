// The state every part of the stand-in's server shares: one object, built once by startStandin.
import type { ServerResponse } from 'node:http';
import { FaultController } from './faults.js';
import { ListEvents } from './list-events.js';
import { RequestLog } from './request-log.js';
import type { ReportsVariant, StandinReport } from './reports.js';
import { ThreatStore } from './threat-store.js';
import type { StandinKeys, StandinOptions } from './types.js';

export interface StandinContext {
  readonly keys: StandinKeys;
  /** "today" for the default date window. */
  readonly now: () => Date;
  readonly faults: FaultController;
  /** Changes and faults timed against the requests of a walk (list-events.ts). */
  readonly listEvents: ListEvents;
  readonly threats: ThreatStore;
  readonly log: RequestLog;
  /** Responses a `hang` fault holds open; close() destroys them. */
  readonly hanging: Set<ServerResponse>;
  readonly reports: StandinReport[];
  reportsVariant: ReportsVariant;
  /** Numeric report cursors are the offset plus this. */
  readonly reportsCursorBase: bigint;
  reportsEnabled: boolean;
  latencyMs: number;
  /** Serve every blockedAt at this UTC offset (e.g. "+05:00"), as ISO 8601 allows; undefined: as stored. */
  blockedAtOffset: string | undefined;
}

export function createStandinContext(options: StandinOptions): StandinContext {
  return {
    keys: options.keys,
    now: options.now ?? (() => new Date()),
    faults: new FaultController(options.seed ?? 1),
    listEvents: new ListEvents(),
    threats: new ThreatStore(options.keys, options.threats ?? []),
    log: new RequestLog(),
    hanging: new Set(),
    reports: [...(options.reports ?? [])],
    reportsVariant: options.reportsVariant ?? 'cursor',
    reportsCursorBase: options.reportsCursorBase ?? 0n,
    reportsEnabled: options.reportsEnabled ?? true,
    latencyMs: options.latencyMs ?? 0,
    blockedAtOffset: options.blockedAtOffset,
  };
}
