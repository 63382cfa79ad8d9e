// The response policy zone's parameters: name lengths, timers, TTL, the SOA's names and the serial
// rule. A leaf: the config, the RPZ export and the DNS primary share them, and the config and the
// main thread read them without loading the exporters (which load the Public Suffix List).

export const MAX_ZONE_NAME = 63;
/** `*.` + host + `.` + zone name must stay within DNS's 253 characters. */
export const MAX_HOST = 253 - 2 - 1 - MAX_ZONE_NAME;
/** Short enough that a removed host stops resolving soon after a reload; resolvers cache NXDOMAIN for the SOA minimum. */
export const TTL = 300;

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

/** The SOA's four timers as the zone file writes them after the serial: "refresh retry expire minimum". */
export function soaTimersOf(timers: ZoneTimers): string {
  return `${timers.refresh} ${timers.retry} ${timers.expire} ${timers.minimum}`;
}

/** The records' TTL (and the SOA's negative TTL). */
export const RPZ_TTL = TTL;
/** The SOA's names and the NS record of the zone, as the file writes them. */
export const SOA_MNAME = 'localhost';
export const SOA_RNAME = 'hostmaster.localhost';

/**
 * The serial of `export --format rpz`: the mirror's last change_seq in seconds (the change feed
 * counts from each writer start's time in microseconds: ThreatRows startFeedAt), so the same
 * mirror gives the same zone, and a later run that changed it a later serial; past the serial of
 * the file being replaced (one of an older version, whose change_seq counted from 1).
 */
export function nextRpzSerial(changeSeq: number, previous: number | undefined): number {
  return serialPast(Math.floor(changeSeq / 1_000_000), previous);
}

/**
 * The DNS primary's next serial (the zone its secondaries compare): the Unix time in seconds when
 * the zone's names changed, the policy BIND and Knot DNS call `unixtime`. A clock, not the
 * mirror's change_seq: a mirror built anew (a new pod without a replica, a volume lost) counts
 * again from its start, and secondaries holding the old mirror's larger serial would keep their
 * old zone. `nowMs`: the daemon's clock (THREAT_MIRROR_NOW moves it in tests).
 */
export function nextZoneSerial(previous: number | undefined, nowMs: number): number {
  return serialPast(Math.floor(nowMs / 1000), previous);
}

/** `candidate` as a serial, or `previous` plus one when it is not after it: serials grow strictly (RFC 1982), however fast they are asked for. */
export function serialPast(candidate: number, previous: number | undefined): number {
  const serial = candidate % 2 ** 32 || 1;
  if (previous === undefined || serialAfter(serial, previous)) return serial;
  return (previous + 1) % 2 ** 32 || 1;
}

/** Of two serials, the later one (RFC 1982). */
export function laterSerial(a: number, b: number): number {
  return serialAfter(a, b) ? a : b;
}

/** RFC 1982: whether serial a comes after b. */
export function serialAfter(a: number, b: number): boolean {
  const half = 2 ** 31;
  return (a < b && b - a > half) || (a > b && a - b < half);
}
