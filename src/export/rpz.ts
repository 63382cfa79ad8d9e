// `rpz`: a DNS Response Policy Zone (draft-vixie-dnsop-dns-rpz) for BIND, Unbound, Knot Resolver
// and PowerDNS Recursor. Each host gets the QNAME trigger `host CNAME .` (answer NXDOMAIN) and its
// wildcard `*.host CNAME .` (every subdomain too).
//
// Owner names are relative and the file sets no $ORIGIN: the server's configuration names the zone,
// so one file loads under any zone name. A name's full length includes that zone name, so hosts too
// long to fit beside a zone name of up to MAX_ZONE_NAME characters are left out (and counted).
import { headerLines, type HostListContext } from './host-header.js';

export const MAX_ZONE_NAME = 63;
/** `*.` + host + `.` + zone name must stay within DNS's 253 characters. */
export const MAX_HOST = 253 - 2 - 1 - MAX_ZONE_NAME;
/** Short enough that a removed host stops resolving soon after a reload; resolvers cache NXDOMAIN for the SOA minimum. */
const TTL = 300;

/** Hosts too long for a zone; the others are the entries. */
export function rpzTooLong(context: HostListContext): number {
  return context.selection.hosts.countLongerThan(MAX_HOST);
}

/** The SOA's timers, in seconds. */
export interface ZoneTimers {
  readonly refresh: number;
  readonly retry: number;
  readonly expire: number;
  readonly minimum: number;
}

/**
 * Timers that fit the sync schedule: a secondary checks for a new serial about once a sync period
 * (NOTIFY tells it sooner), retries five times as often, and keeps serving its copy for ten days
 * without the primary. The negative TTL is the records' TTL.
 */
export function zoneTimersFor(periodSeconds: number): ZoneTimers {
  const refresh = Math.min(86_400, Math.max(60, periodSeconds));
  return { refresh, retry: Math.max(30, Math.round(refresh / 5)), expire: 864_000, minimum: TTL };
}

/** The records' TTL (and the SOA's negative TTL). */
export const RPZ_TTL = TTL;
/** The SOA's names and the NS record of the zone, as the file writes them. */
export const SOA_MNAME = 'localhost';
export const SOA_RNAME = 'hostmaster.localhost';

export function* renderRpz(context: HostListContext, serial: number): Generator<string> {
  const timers = context.timers ?? zoneTimersFor(600);
  const tooLong = rpzTooLong(context);
  for (const line of headerLines('response policy zone', context)) yield `; ${line}\n`;
  yield `; ${tooLong} hosts longer than ${MAX_HOST} characters left out (no room for a zone name of up to ${MAX_ZONE_NAME})\n`;
  yield `; load it under a zone name of your choice, e.g. rpz.threat-mirror (see docs/exports.md)\n`;
  yield `$TTL ${TTL}\n`;
  yield `@ IN SOA ${SOA_MNAME}. ${SOA_RNAME}. ${serial} ${timers.refresh} ${timers.retry} ${timers.expire} ${timers.minimum}\n`;
  yield `@ IN NS ${SOA_MNAME}.\n`;
  for (const host of context.selection.hosts.sorted(MAX_HOST)) yield `${host} CNAME .\n*.${host} CNAME .\n`;
}

/** The serial in a zone file written by renderRpz, to keep it growing across rewrites. */
export function rpzSerialOf(text: string): number | undefined {
  const match = /^@ IN SOA \S+ \S+ (\d+) /m.exec(text);
  return match ? Number(match[1]) : undefined;
}

/**
 * The next serial: the mirror's change_seq (so the same mirror gives the same zone), unless that
 * is not after the previous file's serial in RFC 1982 serial arithmetic (a rebuilt mirror starts
 * its change_seq again), then the previous one plus one.
 */
export function nextRpzSerial(changeSeq: number, previous: number | undefined): number {
  const candidate = changeSeq % 2 ** 32 || 1;
  if (previous === undefined || serialAfter(candidate, previous)) return candidate;
  return (previous + 1) % 2 ** 32 || 1;
}

/** RFC 1982: whether serial a comes after b. */
export function serialAfter(a: number, b: number): boolean {
  const half = 2 ** 31;
  return (a < b && b - a > half) || (a > b && a - b < half);
}
