// Who gets a DNS TCP connection, decided at accept, before any work is queued: addresses of
// THREAT_MIRROR_DNS_ALLOW take places of their own (so none outside it can hold one a secondary
// needs), a few per address; addresses outside it share a small pool whose connections answer one
// query (REFUSED) and live a short while; beyond either, a connection is closed at once. 64
// connections from outside the list, kept open with a byte every 20 s, held every place before,
// and no secondary could transfer the zone while they lasted.
import type { AddressAcl } from './acl.js';
import type { TcpSessionLimits } from './tcp-session.js';

export const TCP_LIMITS = {
  /** Connections from allowed addresses at once: transfers are few, and each holds a read transaction. */
  allowedConnections: 64,
  /** ...and from one allowed address. */
  allowedPerAddress: 16,
  /** Connections from addresses outside the list at once, each answered REFUSED... */
  refusedConnections: 8,
  /** ...and from one such address. */
  refusedPerAddress: 2,
} as const;

/** An allowed client: idle 10 s between queries (RFC 7766 6.2.3: seconds, not minutes), 20 s to read what it is sent. */
export const ALLOWED_SESSION: TcpSessionLimits = { idleMs: 10_000, writeStallMs: 20_000, maxQueued: 16 };

/** A client outside the list: one query, answered REFUSED, within 2 s of connecting. */
export const REFUSED_SESSION: TcpSessionLimits = { idleMs: 2_000, writeStallMs: 2_000, maxQueued: 1, maxQueries: 1, lifetimeMs: 2_000 };

export type Pool = 'allowed' | 'refused';

/** Counts the connections of each pool, in all and per address. */
export class TcpAdmission {
  readonly #acl: AddressAcl;
  readonly #open: Record<Pool, { total: number; byAddress: Map<string, number> }> = {
    allowed: { total: 0, byAddress: new Map() },
    refused: { total: 0, byAddress: new Map() },
  };

  constructor(acl: AddressAcl) {
    this.#acl = acl;
  }

  /** The pool a new connection from `address` takes a place in, or undefined when it must be closed. */
  admit(address: string | undefined): Pool | undefined {
    if (address === undefined) return undefined;
    const pool: Pool = this.#acl.allows(address) ? 'allowed' : 'refused';
    const open = this.#open[pool];
    const fromAddress = open.byAddress.get(address) ?? 0;
    const [total, perAddress] = pool === 'allowed' ? [TCP_LIMITS.allowedConnections, TCP_LIMITS.allowedPerAddress] : [TCP_LIMITS.refusedConnections, TCP_LIMITS.refusedPerAddress];
    if (open.total >= total || fromAddress >= perAddress) return undefined;
    open.total += 1;
    open.byAddress.set(address, fromAddress + 1);
    return pool;
  }

  /** The place of a connection that closed. */
  release(pool: Pool, address: string): void {
    const open = this.#open[pool];
    open.total -= 1;
    const left = (open.byAddress.get(address) ?? 1) - 1;
    if (left > 0) open.byAddress.set(address, left);
    else open.byAddress.delete(address);
  }
}
