// Lookup columns derived from a threat's content, and the same normalization for values people
// look up, so "is this blocked?" is an index search whatever form the question comes in.
import { getDomain } from 'tldts';
import { canonicalExpression, canonicalizeWebUrl } from './canonical-url.js';

export interface LookupFields {
  /** URL and PAGE: the lower-cased host name (IDNs in their xn-- form). */
  readonly host: string | null;
  /** The registrable part of the host or e-mail domain (Public Suffix List, private domains included). */
  readonly registrableDomain: string | null;
  /** ADDRESS in chain-qualified form namespace:chain-id:address. */
  readonly addressNamespace: string | null;
  readonly addressChain: string | null;
  /** The address itself; hex (EVM-style) addresses lower-cased so lookups ignore case. */
  readonly address: string | null;
  /** EMAIL: the lower-cased address and its domain. */
  readonly email: string | null;
  readonly emailDomain: string | null;
  /** URL and PAGE: the Safe Browsing canonical expression (host/path?query) lookups match against. */
  readonly urlExpression: string | null;
}

const NONE: LookupFields = Object.freeze({
  host: null,
  registrableDomain: null,
  addressNamespace: null,
  addressChain: null,
  address: null,
  email: null,
  emailDomain: null,
  urlExpression: null,
});

// CAIP-10 account ids: namespace [-a-z0-9]{3,8}, reference [-_a-zA-Z0-9]{1,32}, address [-.%a-zA-Z0-9]{1,128}.
const CHAIN_QUALIFIED = /^([-a-z0-9]{3,8}):([-_a-zA-Z0-9]{1,32}):([-.%a-zA-Z0-9]{1,128})$/;
const HEX_ADDRESS = /^0x[0-9a-fA-F]+$/;
/**
 * Bare addresses of the chain families the lookup knows besides EVM's 0x hex, matched to their
 * chain-qualified threats by the address alone: base58 (Solana 32-44 characters, Bitcoin legacy
 * 1… and 3…, Tron T…) and bech32/bech32m (Bitcoin bc1…, Cosmos cosmos1…: a human-readable part,
 * "1", then the data characters, which exclude 1, b, i and o). Either is one case throughout.
 */
const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{25,44}$/;
const BECH32_ADDRESS = /^(?:[a-z]{1,16}1[02-9ac-hj-np-z]{6,90}|[A-Z]{1,16}1[02-9AC-HJ-NP-Z]{6,90})$/;
// The local part in RFC 5321's ASCII atom characters and dots: no spaces, quotes or bidi controls.
const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@([^\s@]{1,253})$/;
const DOMAIN = /^(?=.{1,253}$)([a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{1,63}$/;
/** Longer content is no URL or address anyone looks up; skip parsing it. */
const MAX_PARSED_LENGTH = 4096;

export function deriveLookupFields(type: string, content: string): LookupFields {
  if (content.length > MAX_PARSED_LENGTH) return NONE;
  switch (type) {
    case 'URL':
    case 'PAGE': {
      const host = hostOfUrl(content);
      const canonical = canonicalizeWebUrl(content);
      const urlExpression = canonical === null ? null : canonicalExpression(canonical);
      return host === null ? { ...NONE, urlExpression } : { ...NONE, host, registrableDomain: registrableDomainOf(host), urlExpression };
    }
    case 'ADDRESS':
      return { ...NONE, ...parseAddress(content) };
    case 'EMAIL': {
      const email = parseEmail(content);
      return email === null ? NONE : { ...NONE, email: email.email, emailDomain: email.domain };
    }
    default:
      return NONE;
  }
}

/** The host of a URL with a scheme; null for anything else (a bare domain, a path, junk). */
export function hostOfUrl(value: string): string | null {
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(value)) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  const host = url.hostname.replace(/\.$/, '');
  return host === '' ? null : host;
}

export function registrableDomainOf(host: string): string | null {
  return getDomain(host, { allowPrivateDomains: true }) ?? null;
}

export function parseAddress(value: string): Pick<LookupFields, 'addressNamespace' | 'addressChain' | 'address'> | null {
  const qualified = CHAIN_QUALIFIED.exec(value);
  if (qualified) {
    const [, namespace, chain, address] = qualified as unknown as [string, string, string, string];
    return { addressNamespace: namespace, addressChain: chain, address: normalizeAddress(address) };
  }
  if (HEX_ADDRESS.test(value)) return { addressNamespace: null, addressChain: null, address: value.toLowerCase() };
  if (BASE58_ADDRESS.test(value)) return { addressNamespace: null, addressChain: null, address: value };
  if (BECH32_ADDRESS.test(value)) return { addressNamespace: null, addressChain: null, address: value.toLowerCase() };
  return null;
}

/** Hex and bech32 addresses in lower case, so lookups ignore case; base58 is case-sensitive. */
function normalizeAddress(address: string): string {
  return HEX_ADDRESS.test(address) || BECH32_ADDRESS.test(address) ? address.toLowerCase() : address;
}

export function parseEmail(value: string): { email: string; domain: string } | null {
  const match = EMAIL.exec(value.trim());
  if (!match) return null;
  const domain = (match[1] as string).toLowerCase();
  if (!DOMAIN.test(domain)) return null;
  return { email: value.trim().toLowerCase(), domain };
}
