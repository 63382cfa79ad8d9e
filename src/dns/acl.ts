// THREAT_MIRROR_DNS_ALLOW: the addresses that may ask the zone's SOA and transfer it.
import { BlockList, isIP } from 'node:net';

/** Loopback only: a resolver on another machine is let in by naming its network. */
export const DEFAULT_DNS_ALLOW = ['127.0.0.0/8', '::1/128'] as const;

export interface Cidr {
  readonly address: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
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

export class AddressAcl {
  readonly #allowed = new BlockList();

  constructor(cidrs: readonly Cidr[]) {
    for (const cidr of cidrs) this.#allowed.addSubnet(cidr.address, cidr.prefix, cidr.family);
  }

  /** An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d: judged as the IPv4 address. */
  allows(address: string): boolean {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    if (mapped !== undefined) return this.#allowed.check(mapped, 'ipv4');
    const version = isIP(address);
    return version !== 0 && this.#allowed.check(address, version === 4 ? 'ipv4' : 'ipv6');
  }
}
