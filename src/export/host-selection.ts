// Turns current threats into the host list that DNS, IDS and wallet formats carry: only threats
// that block a whole host, each host a valid DNS name in its ASCII (xn--) form, deduplicated and
// sorted, with a count of everything left out and why.
import type { CurrentThreat } from './current-threats.js';
import { blockableHost, type HostRefusal } from './blockable-host.js';
import { hostBlockOf } from './host-block.js';
import { HostSet } from './host-set.js';

/** Why a URL/PAGE threat gave no host entry: a path-level block, or the host's refusal (blockable-host.ts). */
export type HostsLeftOut = {
  /** Blocks a path or query on its host: a DNS entry would block every page of a possibly shared host. */
  pathLevel: number;
} & Record<HostRefusal, number>;

export interface HostSelection {
  /** Unique lower-case ASCII host names, outside the heap; close() releases them. */
  readonly hosts: HostSet;
  readonly hostCount: number;
  /** URL/PAGE threats whose host made it in (several may give the same host). */
  readonly hostThreats: number;
  readonly leftOut: Readonly<HostsLeftOut>;
  /** Current threats of other types (addresses, e-mails, profiles…): never host entries. */
  readonly otherTypes: number;
}

const HOST_TYPES = new Set(['URL', 'PAGE']);
/** Rows between two pauses, so a daemon's health endpoints answer while a large mirror is read. */
const ROWS_PER_PAUSE = 5_000;

export async function selectHosts(threats: Iterable<CurrentThreat>): Promise<HostSelection> {
  const hosts = new HostSet();
  const leftOut: HostsLeftOut = { pathLevel: 0, notAHost: 0, ipAddress: 0, rpzTrigger: 0, notDelegated: 0, publicSuffix: 0 };
  let hostThreats = 0;
  let otherTypes = 0;
  let rows = 0;
  try {
    for (const threat of threats) {
      if (++rows % ROWS_PER_PAUSE === 0) await new Promise((resolve) => setImmediate(resolve));
      if (!HOST_TYPES.has(threat.type)) {
        otherTypes += 1;
        continue;
      }
      const block = hostBlockOf(threat.content);
      if (block.kind === 'path-level') {
        leftOut.pathLevel += 1;
        continue;
      }
      const host = block.kind === 'host' ? blockableHost(block.host) : { problem: 'notAHost' as const };
      if (typeof host !== 'string') {
        leftOut[host.problem] += 1;
        continue;
      }
      hosts.add(host);
      hostThreats += 1;
    }
  } catch (error) {
    hosts.close();
    throw error;
  }
  return { hosts, hostCount: hosts.size, hostThreats, leftOut, otherTypes };
}

export function totalLeftOut(leftOut: Readonly<HostsLeftOut>): number {
  return leftOut.pathLevel + leftOut.notAHost + leftOut.ipAddress + leftOut.rpzTrigger + leftOut.notDelegated + leftOut.publicSuffix;
}

/** One line for headers and the command's summary. */
export function describeLeftOut(leftOut: Readonly<HostsLeftOut>): string {
  const parts = [
    `${leftOut.pathLevel} path-level URL/PAGE blocks`,
    `${leftOut.notAHost} without a valid host name`,
    `${leftOut.ipAddress} IP addresses`,
    `${leftOut.rpzTrigger} with an rpz- label (RPZ triggers, not names)`,
    `${leftOut.notDelegated} outside a delegated top-level domain`,
    `${leftOut.publicSuffix} public suffixes`,
  ];
  return parts.join(', ');
}
