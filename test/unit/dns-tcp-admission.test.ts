// Who gets a DNS TCP connection at accept (src/dns/tcp-admission.ts): allowed addresses their own
// places, a few per address; the rest a small pool; beyond either, none.
import { describe, expect, it } from 'vitest';
import { parseCidr } from '../../src/config/dns.js';
import { AddressAcl } from '../../src/dns/acl.js';
import { TCP_LIMITS, TcpAdmission } from '../../src/dns/tcp-admission.js';

const acl = new AddressAcl([parseCidr('10.0.0.0/24')].filter((cidr) => cidr !== undefined));

describe('TcpAdmission', () => {
  it('gives an allowed address its places whatever the outsiders hold, up to its own cap and the pool', () => {
    const admission = new TcpAdmission(acl);
    // Outsiders fill their pool: two per address.
    const outsiders = Array.from({ length: 20 }, (_, index) => admission.admit(`192.0.2.${Math.floor(index / 3)}`));
    expect(outsiders.filter((pool) => pool === 'refused')).toHaveLength(TCP_LIMITS.refusedConnections);
    expect(outsiders.slice(0, 3)).toEqual(['refused', 'refused', undefined]);
    // The secondary still gets in, up to its cap per address.
    const secondary = Array.from({ length: TCP_LIMITS.allowedPerAddress + 1 }, () => admission.admit('10.0.0.5'));
    expect(secondary.filter((pool) => pool === 'allowed')).toHaveLength(TCP_LIMITS.allowedPerAddress);
    expect(secondary.at(-1)).toBeUndefined();
    // A place given back is a place again.
    admission.release('allowed', '10.0.0.5');
    expect(admission.admit('10.0.0.5')).toBe('allowed');
    admission.release('refused', '192.0.2.0');
    expect(admission.admit('192.0.2.0')).toBe('refused');
  });

  it('holds all allowed addresses together to the pool, and closes a connection with no address', () => {
    const admission = new TcpAdmission(acl);
    const all = Array.from({ length: 100 }, (_, index) => admission.admit(`10.0.0.${index % 50}`));
    expect(all.filter((pool) => pool === 'allowed')).toHaveLength(TCP_LIMITS.allowedConnections);
    expect(admission.admit(undefined)).toBeUndefined();
    // IPv4 seen through a dual-stack socket is judged as IPv4.
    expect(new TcpAdmission(acl).admit('::ffff:10.0.0.9')).toBe('allowed');
  });
});
