// Turns current threats into the host list that DNS, IDS and wallet formats carry: only threats
// that block a whole host, each host a valid DNS name in its ASCII (xn--) form, deduplicated and
// sorted, with a count of everything left out and why. What a threat gives is read from its row
// (export_host, export_left_out: derived once when the row was written, src/url/lookup-fields.ts),
// never from its content again.
import type { AllowMatcher } from '../allowlist/allow-matcher.js';
import { blockableHost, type HostRefusal } from '../url/blockable-host.js';
import { TYPES_READ_AS } from '../url/lookup-fields.js';
import { type HostList, HostSet } from './host-set.js';
import { MAX_HOST } from '../lib/rpz-zone.js';

/** Why a URL/PAGE threat gave no host entry: a path-level block, or the host's refusal (blockable-host.ts). */
export type HostsLeftOut = {
  /** Blocks a path or query on its host: a DNS entry would block every page of a possibly shared host. */
  pathLevel: number;
} & Record<HostRefusal, number>;

export interface HostSelection {
  /** Unique lower-case ASCII host names, outside the heap; close() releases them. */
  readonly hosts: HostList;
  readonly hostCount: number;
  /** URL/PAGE threats whose host made it in (several may give the same host). */
  readonly hostThreats: number;
  readonly leftOut: Readonly<HostsLeftOut>;
  /** Current threats of other types (addresses, e-mails, profiles…): never host entries. */
  readonly otherTypes: number;
  /** What THREAT_MIRROR_ALLOWLIST took out and lets through; absent when none is configured. */
  readonly allowlist?: AllowedHosts | undefined;
}

/** What an allowlist did to a host list. */
export interface AllowedHosts {
  /** Current threats it allows (of any type): in no list, counted apart from everything else. */
  readonly threats: number;
  /** The hosts it allows as a whole that a zone can name, sorted: the RPZ lets them through (rpz-passthru). */
  readonly passthru: readonly string[];
  /** Hosts it allows as a whole that no list may carry (blockable-host.ts) or too long for a zone: no passthru rule. */
  readonly notListed: number;
}

/** The allowlist's side of a selection: `threats` counted by whoever read the threats. */
export function allowedHostsOf(allowlist: AllowMatcher, threats: number): AllowedHosts {
  const passthru: string[] = [];
  let notListed = 0;
  for (const host of allowlist.wholeHosts()) {
    const name = blockableHost(host);
    if (typeof name === 'string' && name.length <= MAX_HOST) passthru.push(name);
    else notListed += 1;
  }
  return { threats, passthru: [...new Set(passthru)].sort(byByte), notListed };
}

function byByte(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The threat types whose content may block a host; every other type is counted as "other types". */
export const HOST_TYPES: ReadonlySet<string> = new Set(TYPES_READ_AS.url);
/** Rows between two pauses, so a daemon's health endpoints answer while a large mirror is read. */
const ROWS_PER_PAUSE = 5_000;

/** What a current threat's row says of its host entry. */
export interface HostSource {
  readonly type: string;
  readonly exportHost: string | null;
  readonly exportLeftOut: string | null;
}

/** `otherTypes`: current threats of other types already counted apart (read with ThreatSnapshot.ofTypes). */
export async function selectHosts(threats: Iterable<HostSource>, otherTypesCounted = 0): Promise<HostSelection> {
  const hosts = new HostSet();
  const leftOut = noneLeftOut();
  let hostThreats = 0;
  let otherTypes = otherTypesCounted;
  let rows = 0;
  try {
    for (const threat of threats) {
      if (++rows % ROWS_PER_PAUSE === 0) await new Promise((resolve) => setImmediate(resolve));
      const entry = hostEntryOf(threat);
      if (entry.kind === 'other-type') otherTypes += 1;
      else if (entry.kind === 'left-out') leftOut[entry.reason] += 1;
      else {
        hosts.add(entry.host);
        hostThreats += 1;
      }
    }
  } catch (error) {
    hosts.close();
    throw error;
  }
  return { hosts, hostCount: hosts.size, hostThreats, leftOut, otherTypes };
}

/** What one current threat gives the host formats: the host it blocks, or why it gives none. */
export type HostEntry =
  | { readonly kind: 'host'; readonly host: string }
  | { readonly kind: 'left-out'; readonly reason: keyof HostsLeftOut }
  | { readonly kind: 'other-type' };

const OTHER_TYPE: HostEntry = { kind: 'other-type' };

const LEFT_OUT_REASONS: ReadonlySet<string> = new Set(Object.keys(noneLeftOut()));

/**
 * "Which host does this threat block", as its row says: every host list, the zone and its deltas
 * read it. A row the writer has not derived under the current rules yet (both NULL) gives none.
 */
export function hostEntryOf(source: HostSource): HostEntry {
  if (!HOST_TYPES.has(source.type)) return OTHER_TYPE;
  if (source.exportHost !== null) return { kind: 'host', host: source.exportHost };
  const reason = source.exportLeftOut ?? 'notAHost';
  return { kind: 'left-out', reason: LEFT_OUT_REASONS.has(reason) ? (reason as keyof HostsLeftOut) : 'notAHost' };
}

/** An empty count of everything left out, by reason. */
export function noneLeftOut(): HostsLeftOut {
  return { pathLevel: 0, notAHost: 0, ipAddress: 0, rpzTrigger: 0, notDelegated: 0, publicSuffix: 0 };
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
