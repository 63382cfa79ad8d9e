// `rpz`: a DNS Response Policy Zone (draft-vixie-dnsop-dns-rpz) for BIND, Unbound, Knot Resolver
// and PowerDNS Recursor. Each host gets the QNAME trigger `host CNAME .` (answer NXDOMAIN) and its
// wildcard `*.host CNAME .` (every subdomain too); each host THREAT_MIRROR_ALLOWLIST allows as a
// whole gets `host CNAME rpz-passthru.` and its wildcard (answered as if no policy applied): a
// resolver that consults this zone before others lets it through theirs too.
//
// Owner names are relative and the file sets no $ORIGIN: the server's configuration names the zone,
// so one file loads under any zone name. A name's full length includes that zone name, so hosts too
// long to fit beside a zone name of up to MAX_ZONE_NAME characters are left out (and counted).
import { headerLines, type HostListContext } from './host-header.js';
import { MAX_HOST, MAX_ZONE_NAME, SOA_MNAME, SOA_RNAME, TTL, zoneTimersFor, soaTimersOf } from '../../lib/rpz-zone.js';
import { zoneNamesOf } from './zone-names.js';

export { laterSerial, MAX_HOST, MAX_ZONE_NAME, nextRpzSerial, nextZoneSerial, RPZ_TTL, serialAfter, serialPast, SOA_MNAME, SOA_RNAME, type ZoneTimers, zoneTimersFor } from '../../lib/rpz-zone.js';

/** Hosts too long for a zone; the others are the entries. */
export function rpzTooLong(context: HostListContext): number {
  return context.selection.hosts.countLongerThan(MAX_HOST);
}

/** Blocked hosts left out because the allowlist lets the same name through (zone-names.ts). */
export function rpzShadowed(context: HostListContext): number {
  return zoneNamesOf(context.selection.hosts, context.selection.allowlist?.passthru ?? []).shadowed;
}

export function* renderRpz(context: HostListContext, serial: number): Generator<string> {
  const timers = context.timers ?? zoneTimersFor(600);
  const tooLong = rpzTooLong(context);
  for (const line of headerLines('response policy zone', context)) yield `; ${line}\n`;
  yield `; ${tooLong} hosts longer than ${MAX_HOST} characters left out (no room for a zone name of up to ${MAX_ZONE_NAME})\n`;
  const allowed = context.selection.allowlist;
  const names = zoneNamesOf(context.selection.hosts, allowed?.passthru ?? []);
  if (allowed !== undefined) {
    const notListed = allowed.notListed === 0 ? '' : `; ${allowed.notListed} allowed hosts no zone may name have none`;
    yield `; ${allowed.passthru.length} hosts allowed locally let through (CNAME rpz-passthru.)${notListed}: list this zone before other policy zones\n`;
    yield `; ${names.shadowed} blocked hosts left out where the allowlist lets the same name through (one record a name)\n`;
  }
  yield `; load it under a zone name of your choice, e.g. rpz.threat-mirror (see docs/exports.md)\n`;
  yield `$TTL ${TTL}\n`;
  yield `@ IN SOA ${SOA_MNAME}. ${SOA_RNAME}. ${serial} ${soaTimersOf(timers)}\n`;
  yield `@ IN NS ${SOA_MNAME}.\n`;
  for (const host of names.blocked) yield `${host} CNAME .\n*.${host} CNAME .\n`;
  for (const host of names.passthru) yield `${host} CNAME rpz-passthru.\n*.${host} CNAME rpz-passthru.\n`;
}

/** The serial in a zone file written by renderRpz, to keep it growing across rewrites. */
export function rpzSerialOf(text: string): number | undefined {
  const match = /^@ IN SOA \S+ \S+ (\d+) /m.exec(text);
  return match ? Number(match[1]) : undefined;
}
