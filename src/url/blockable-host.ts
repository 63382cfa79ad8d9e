// The one rule for which host names a block list may carry, applied once when a row is written
// (lookup-fields.ts: threats.export_host, read by every host format, STIX domain patterns and the
// DNS zone) and to the allowlist's passthru names. A threat's content is attacker-controlled: a
// name that a resolver reads as something other than a plain domain turns the list against its
// users. In an RPZ, `1.0.0.0.0.rpz-client-ip` is a trigger on the client's address (Unbound then
// answered NXDOMAIN to every query from half of IPv4) and `…rpz-ip`, `…rpz-nsip`, `…rpz-nsdname`
// act on answers and name servers, not on a name.
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { getPublicSuffix, parse } from 'tldts';

/** Why a host gives no entry. */
export type HostRefusal =
  /** No valid DNS name: bad characters, a label over 63, over 253 in all. */
  | 'notAHost'
  /** An IP address: the lists carry names only. */
  | 'ipAddress'
  /** A label begins `rpz-`: RPZ reads such names as triggers on addresses and name servers (BIND ARM, Response Policy Zone). */
  | 'rpzTrigger'
  /** The last label is no delegated top-level domain (not in the ICANN section of the Public Suffix List): `.example`, `.local`, `rpz-ip`. */
  | 'notDelegated'
  /** The host is a public suffix (`com`, `github.io`): an entry would block everyone under it. */
  | 'publicSuffix';

/** A name in lower-case ASCII already. */
const PLAIN = /^[a-z0-9._-]+$/;
/** Letters, digits, hyphen and underscore: what every format here (zone files included) takes unquoted. */
const LABEL = /^[a-z0-9_-]{1,63}$/;

/** Top-level domains found delegated: a few hundred at most, so remembered; refusals are not (they come from the data). */
const delegatedTlds = new Set<string>();

/**
 * The host as a lower-case ASCII (xn--) DNS name that every resolver and filter reads as a plain
 * domain, or why it is not one. `raw` is a URL's host as the URL reader gives it (web-url.ts).
 */
export function blockableHost(raw: string): string | { readonly problem: HostRefusal } {
  const unbracketed = raw.replace(/^\[(.*)\]$/, '$1');
  if (isIP(unbracketed) !== 0) return { problem: 'ipAddress' };
  // The URL reader's hosts are lower-case ASCII already (most of them: no IDNA pass to make);
  // a trailing dot left on one is an empty label, no DNS name.
  const ascii = PLAIN.test(raw) ? raw : domainToASCII(raw.toLowerCase());
  if (ascii === '' || ascii.length > 253) return { problem: 'notAHost' };
  const labels = ascii.split('.');
  if (!labels.every((label) => LABEL.test(label))) return { problem: 'notAHost' };
  if (labels.some((label) => label.startsWith('rpz-'))) return { problem: 'rpzTrigger' };
  if (!isDelegatedTld(labels[labels.length - 1] as string)) return { problem: 'notDelegated' };
  if (getPublicSuffix(ascii, { allowPrivateDomains: true }) === ascii) return { problem: 'publicSuffix' };
  return ascii;
}

/** Whether `tld` is a top-level domain of the ICANN section of the Public Suffix List (tldts). */
export function isDelegatedTld(tld: string): boolean {
  if (delegatedTlds.has(tld)) return true;
  // tldts answers an unknown label with its default rule ("*"): a suffix, but not an ICANN one.
  const delegated = parse(tld, { allowPrivateDomains: false }).isIcann === true;
  if (delegated) delegatedTlds.add(tld);
  return delegated;
}
