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

/** The records' TTL (and the SOA's negative TTL). */
export const RPZ_TTL = TTL;
/** The SOA's names and the NS record of the zone, as the file writes them. */
export const SOA_MNAME = 'localhost';
export const SOA_RNAME = 'hostmaster.localhost';

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
