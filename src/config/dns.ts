// THREAT_MIRROR_DNS_* and THREAT_MIRROR_RPZ_ZONE: the DNS primary's address, zone name, who may
// ask, whom to NOTIFY; and the zone's SOA timers, which follow THREAT_MIRROR_SCHEDULE.
import { isIP } from 'node:net';
import { ConfigError } from '../lib/errors.js';
import { MAX_ZONE_NAME, type ZoneTimers, zoneTimersFor } from '../lib/rpz-zone.js';
import { schedulePeriodSeconds } from '../lib/schedule.js';
import { type DnsTsigKey, loadDnsTsigKey } from './dns-tsig.js';
import { type Environment, type FileReader, value } from './read.js';
import { DNS_ALLOW, DNS_HOST, DNS_NOTIFY, DNS_PORT, RPZ_ZONE, SCHEDULE } from './variables.js';

export interface Cidr {
  readonly address: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
}

export interface NotifyTarget {
  readonly host: string;
  readonly port: number;
}

export interface DnsConfig {
  readonly port: number;
  readonly host: string;
  /** Lower case, no trailing dot. */
  readonly zone: string;
  readonly allow: readonly Cidr[];
  readonly notify: readonly NotifyTarget[];
  /** THREAT_MIRROR_DNS_TSIG_KEY: queries must be signed with it, answers and NOTIFYs are. */
  readonly tsig: DnsTsigKey | undefined;
}

const ZONE_NAME = /^(?=.{1,63}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** For `export --format rpz`: the SOA timers that fit the daemon's schedule, as the daemon's zone has them. */
export function loadZoneTimers(env: Environment): ZoneTimers {
  return zoneTimersFor(schedulePeriodSeconds(SCHEDULE.read(env)));
}

/** THREAT_MIRROR_DNS_*: undefined unless a port is set; every other variable is checked all the same. */
export function loadDnsConfig(env: Environment, readFile: FileReader): DnsConfig | undefined {
  const zone = RPZ_ZONE.read(env).toLowerCase().replace(/\.$/, '');
  if (!ZONE_NAME.test(zone)) {
    throw new ConfigError(`${RPZ_ZONE.name}: "${zone}" is not a zone name (letters, digits, '-' and '_' in dot-separated labels, up to ${MAX_ZONE_NAME} characters)`);
  }
  const host = DNS_HOST.read(env);
  if (isIP(host) === 0) throw new ConfigError(`${DNS_HOST.name}: "${host}" is not an IP address`);
  const allow = listOf(value(env, DNS_ALLOW.name) ?? DNS_ALLOW.default).map((item) => {
    const cidr = parseCidr(item);
    if (cidr === undefined) throw new ConfigError(`${DNS_ALLOW.name}: "${item}" is not an address or CIDR such as 10.0.0.0/8 or fd00::/8`);
    return cidr;
  });
  const notify = listOf(value(env, DNS_NOTIFY.name) ?? '').map((item) => {
    const target = parseHostPort(item);
    if (target === undefined) throw new ConfigError(`${DNS_NOTIFY.name}: "${item}" is not host:port with an IP address, e.g. 10.0.0.53:53 or [fd00::53]:53`);
    return target;
  });
  const tsig = loadDnsTsigKey(env, readFile);
  const port = DNS_PORT.read(env);
  return port === undefined ? undefined : { port, host, zone, allow, notify, tsig };
}

function listOf(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** `10.0.0.0/8`, `fd00::/8`, or a single address (a /32 or /128); undefined when it is neither. */
export function parseCidr(text: string): Cidr | undefined {
  const [address = '', prefixText, extra] = text.trim().split('/');
  if (extra !== undefined) return undefined;
  const version = isIP(address);
  if (version === 0) return undefined;
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!/^\d{1,3}$/.test(prefixText ?? String(max)) || prefix > max) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** `10.0.0.53:53`, `[fd00::53]:53`, or an address alone (port 53). */
function parseHostPort(text: string): NotifyTarget | undefined {
  const match = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text) ?? /^([^:]+)(?::(\d{1,5}))?$/.exec(text);
  if (match === null || isIP(match[1] ?? '') === 0) return undefined;
  const port = match[2] === undefined ? 53 : Number(match[2]);
  return port >= 1 && port <= 65_535 ? { host: match[1] as string, port } : undefined;
}
