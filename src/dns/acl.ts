// THREAT_MIRROR_DNS_ALLOW: the addresses that may ask the zone's SOA and transfer it (read by config/dns.ts).
import { BlockList, isIP } from 'node:net';
import type { Cidr } from '../config/dns.js';

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
