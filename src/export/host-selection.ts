// Turns current threats into the host list that DNS, IDS and wallet formats carry: only threats
// that block a whole host, each host a valid DNS name in its ASCII (xn--) form, deduplicated and
// sorted, with a count of everything left out and why.
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { getPublicSuffix } from 'tldts';
import type { CurrentThreat } from './current-threats.js';
import { hostBlockOf } from './host-block.js';
import { HostSet } from './host-set.js';

/** Why a URL/PAGE threat gave no host entry. */
export interface HostsLeftOut {
  /** Blocks a path or query on its host: a DNS entry would block every page of a possibly shared host. */
  pathLevel: number;
  /** No web host, or a host that is no valid DNS name (bad characters, a label over 63, over 253 in all). */
  notAHost: number;
  /** An IP address: DNS formats carry names only. */
  ipAddress: number;
  /** The host is a public suffix (`com`, `github.io`): an entry would block everyone under it. */
  publicSuffix: number;
}

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
/** Letters, digits, hyphen and underscore: what every format here (zone files included) takes unquoted. */
const LABEL = /^[a-z0-9_-]{1,63}$/;
/** Rows between two pauses, so a daemon's health endpoints answer while a large mirror is read. */
const ROWS_PER_PAUSE = 5_000;

export async function selectHosts(threats: Iterable<CurrentThreat>): Promise<HostSelection> {
  const hosts = new HostSet();
  const leftOut: HostsLeftOut = { pathLevel: 0, notAHost: 0, ipAddress: 0, publicSuffix: 0 };
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
      const host = block.kind === 'host' ? dnsHostName(block.host) : { problem: 'notAHost' as const };
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

/** The host as a DNS name fit for a block list, or why it is not one. */
export function dnsHostName(raw: string): string | { problem: 'notAHost' | 'ipAddress' | 'publicSuffix' } {
  const unbracketed = raw.replace(/^\[(.*)\]$/, '$1');
  if (isIP(unbracketed) !== 0) return { problem: 'ipAddress' };
  const ascii = domainToASCII(raw.toLowerCase().replace(/\.$/, ''));
  if (ascii === '' || ascii.length > 253) return { problem: 'notAHost' };
  const labels = ascii.split('.');
  if (!labels.every((label) => LABEL.test(label))) return { problem: 'notAHost' };
  // tldts reads an unknown last label as a suffix too, so single-label names end up here.
  if (getPublicSuffix(ascii, { allowPrivateDomains: true }) === ascii) return { problem: 'publicSuffix' };
  return ascii;
}

export function totalLeftOut(leftOut: Readonly<HostsLeftOut>): number {
  return leftOut.pathLevel + leftOut.notAHost + leftOut.ipAddress + leftOut.publicSuffix;
}

/** One line for headers and the command's summary. */
export function describeLeftOut(leftOut: Readonly<HostsLeftOut>): string {
  const parts = [
    `${leftOut.pathLevel} path-level URL/PAGE blocks`,
    `${leftOut.notAHost} without a valid host name`,
    `${leftOut.ipAddress} IP addresses`,
    `${leftOut.publicSuffix} public suffixes`,
  ];
  return parts.join(', ');
}
