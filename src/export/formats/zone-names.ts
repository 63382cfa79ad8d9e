// The one rule every response policy zone served is held to, checked here before it is served:
// one record per owner name. A host both blocked (`host CNAME .`) and let through by the allowlist
// (`host CNAME rpz-passthru.`) would put two CNAMEs at one owner, which named-checkzone refuses
// ("multiple RRs of singleton type") and a BIND secondary refuses in a transfer, then enforcing
// nothing at all. The passthru wins at its owner: the block is left out and counted. The RPZ file
// and feed (rpz.ts) and the zone's AXFR (dns/zone-reader.ts) list their names through
// zoneNamesOf; an IXFR's steps are checked with stepsKeepOneRecordPerOwner.
import type { HostList } from '../host-set.js';
import type { ZoneStep } from '../index/schema.js';
import { MAX_HOST } from '../../lib/rpz-zone.js';

export interface ZoneNames {
  /** The blocked hosts of the zone, sorted: short enough for a zone name, and no passthru name among them. */
  readonly blocked: Iterable<string>;
  /** The hosts let through, sorted. */
  readonly passthru: readonly string[];
  /** Blocked hosts left out because the allowlist lets the same name through. */
  readonly shadowed: number;
}

export function zoneNamesOf(hosts: HostList, passthru: readonly string[]): ZoneNames {
  const through = new Set(passthru);
  const shadowed = passthru.filter((host) => host.length <= MAX_HOST && hosts.has(host)).length;
  // Read only when iterated (a statement left open would keep its connection busy), and as often.
  const blocked = {
    *[Symbol.iterator](): Generator<string> {
      for (const host of hosts.sorted(MAX_HOST)) if (shadowed === 0 || !through.has(host)) yield host;
    },
  };
  return { blocked, passthru, shadowed };
}

/** What the current version holds at an owner: a block, a passthru, or nothing. */
export type OwnerRecord = 'block' | 'passthru' | undefined;

/**
 * Whether applying `steps` in order keeps one record per owner at every step: each deletion finds
 * its record, each addition finds its owner free. The state before the steps is worked out
 * backwards from the current version (`now`), for the owners the steps name only.
 */
export function stepsKeepOneRecordPerOwner(steps: readonly ZoneStep[], now: (host: string) => OwnerRecord): boolean {
  const state = new Map<string, OwnerRecord>();
  for (const step of steps) for (const name of [...step.removed, ...step.added]) if (!state.has(name.host)) state.set(name.host, now(name.host));
  // Back to the state before the first step: undo each step, last first.
  for (const step of [...steps].reverse()) {
    for (const name of step.added) state.set(name.host, undefined);
    for (const name of step.removed) state.set(name.host, name.passthru ? 'passthru' : 'block');
  }
  for (const step of steps) {
    for (const name of step.removed) {
      if (state.get(name.host) !== (name.passthru ? 'passthru' : 'block')) return false;
      state.set(name.host, undefined);
    }
    for (const name of step.added) {
      if (state.get(name.host) !== undefined) return false;
      state.set(name.host, name.passthru ? 'passthru' : 'block');
    }
  }
  return [...state].every(([host, record]) => record === now(host));
}
