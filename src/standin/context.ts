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
  reportsEnabled: boolean;
  latencyMs: number;
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
    reportsEnabled: options.reportsEnabled ?? true,
    latencyMs: options.latencyMs ?? 0,
  };
}
