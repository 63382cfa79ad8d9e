// THREAT_MIRROR_DNS_* and THREAT_MIRROR_RPZ_ZONE, read for loadConfig (src/config.ts keeps their
// --help rows): the DNS primary's address, zone name, who may ask, whom to NOTIFY.
import { isIP } from 'node:net';
import { MAX_ZONE_NAME, type ZoneTimers, zoneTimersFor } from '../export/zone-params.js';
import { ConfigError } from '../lib/errors.js';
import { schedulePeriodSeconds, scheduleOf } from '../lib/schedule.js';
import { type Cidr, DEFAULT_DNS_ALLOW, parseCidr } from './acl.js';
import type { NotifyTarget } from './notify.js';

export interface DnsConfig {
  readonly port: number;
  readonly host: string;
  /** Lower case, no trailing dot. */
  readonly zone: string;
  readonly allow: readonly Cidr[];
  readonly notify: readonly NotifyTarget[];
}

type Environment = Readonly<Record<string, string | undefined>>;

/** An unset or blank variable counts as absent (as in config.ts). */
function value(env: Environment, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

export const DEFAULT_RPZ_ZONE = 'rpz.threat-mirror';

/** Their rows in `--help` (config.ts ENVIRONMENT_VARIABLES). */
export const DNS_VARIABLES: ReadonlyArray<{ name: string; default: string; meaning: string }> = [
  { name: 'THREAT_MIRROR_DNS_PORT', default: '(off)', meaning: 'Serve the response policy zone as a DNS primary on this port, UDP and TCP (SOA, AXFR, IXFR): resolvers become its secondaries (docs/dns.md)' },
  { name: 'THREAT_MIRROR_DNS_HOST', default: '127.0.0.1', meaning: 'Address the DNS primary binds to, and sends NOTIFY from' },
  { name: 'THREAT_MIRROR_RPZ_ZONE', default: DEFAULT_RPZ_ZONE, meaning: 'Name of the zone the DNS primary serves (up to 63 characters)' },
  { name: 'THREAT_MIRROR_DNS_ALLOW', default: DEFAULT_DNS_ALLOW.join(','), meaning: 'CIDRs that may query and transfer the zone; others are REFUSED' },
  { name: 'THREAT_MIRROR_DNS_NOTIFY', default: '(none)', meaning: 'host:port of secondaries sent NOTIFY after each run that changed the zone, e.g. 10.0.0.53:53,[fd00::53]:53' },
];

/** For `export --format rpz`: the SOA timers that fit the daemon's schedule, as the daemon's zone has them. */
export function loadZoneTimers(env: Environment): ZoneTimers {
  return zoneTimersFor(schedulePeriodSeconds(scheduleOf(env)));
}
const ZONE_NAME = /^(?=.{1,63}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** THREAT_MIRROR_DNS_*: undefined unless a port is set; every other variable is checked all the same. */
export function loadDnsConfig(env: Environment, integer: (name: string, fallback: number, min: number, max: number) => number): DnsConfig | undefined {
  const portText = value(env, 'THREAT_MIRROR_DNS_PORT');
  const zone = (value(env, 'THREAT_MIRROR_RPZ_ZONE') ?? DEFAULT_RPZ_ZONE).toLowerCase().replace(/\.$/, '');
  if (!ZONE_NAME.test(zone)) {
    throw new ConfigError(`THREAT_MIRROR_RPZ_ZONE: "${zone}" is not a zone name (letters, digits, '-' and '_' in dot-separated labels, up to ${MAX_ZONE_NAME} characters)`);
  }
  const host = value(env, 'THREAT_MIRROR_DNS_HOST') ?? '127.0.0.1';
  if (isIP(host) === 0) throw new ConfigError(`THREAT_MIRROR_DNS_HOST: "${host}" is not an IP address`);
  const allow = (value(env, 'THREAT_MIRROR_DNS_ALLOW')?.split(',') ?? [...DEFAULT_DNS_ALLOW]).map((item) => item.trim()).filter((item) => item !== '').map((item) => {
    const cidr = parseCidr(item);
    if (cidr === undefined) throw new ConfigError(`THREAT_MIRROR_DNS_ALLOW: "${item}" is not an address or CIDR such as 10.0.0.0/8 or fd00::/8`);
    return cidr;
  });
  const notify = (value(env, 'THREAT_MIRROR_DNS_NOTIFY')?.split(',') ?? []).map((item) => item.trim()).filter((item) => item !== '').map((item) => {
    const target = parseHostPort(item);
    if (target === undefined) throw new ConfigError(`THREAT_MIRROR_DNS_NOTIFY: "${item}" is not host:port with an IP address, e.g. 10.0.0.53:53 or [fd00::53]:53`);
    return target;
  });
  if (portText === undefined) return undefined;
  return { port: integer('THREAT_MIRROR_DNS_PORT', 0, 0, 65_535), host, zone, allow, notify };
}

/** `10.0.0.53:53`, `[fd00::53]:53`, or an address alone (port 53). */
function parseHostPort(text: string): NotifyTarget | undefined {
  const match = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text) ?? /^([^:]+)(?::(\d{1,5}))?$/.exec(text);
  if (match === null || isIP(match[1] ?? '') === 0) return undefined;
  const port = match[2] === undefined ? 53 : Number(match[2]);
  return port >= 1 && port <= 65_535 ? { host: match[1] as string, port } : undefined;
}
