// The one classifier of values that are no URL with a scheme: a bare host name (`evil.example/x`,
// read as `http://…` by the URL reader, web-url.ts), a blockchain address, an e-mail address. A
// threat's content, a looked-up value and an allowlist line are all classified here, so that no two
// consumers disagree on what a value is.

/** The address parts of a value: chain-qualified (namespace and chain set) or bare (both null). */
export interface AddressParts {
  readonly addressNamespace: string | null;
  readonly addressChain: string | null;
  /** The address itself; hex and bech32 lower-cased (lookups ignore their case), base58 as written. */
  readonly address: string;
}

/** Longer values are no address or e-mail (none is near this long): they are not parsed as one. */
export const MAX_PARSED_LENGTH = 4096;

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
/**
 * A value that starts with a host name: two or more labels of letters (any script), digits, marks,
 * `_` and `-`, then an optional port, then the end or a `/`, `\`, `?` or `#`. `evil.example`,
 * `bücher.example/x` and `1.2.3.4:8080/a` are; `not a url`, `hello` and `user@evil.example` are not.
 */
const BARE_HOST = /^(?:[\p{L}\p{N}\p{M}_](?:[\p{L}\p{N}\p{M}_-]{0,61}[\p{L}\p{N}\p{M}])?\.)+[\p{L}\p{N}\p{M}-]{1,63}\.?(?::[0-9]{1,5})?(?:[/\\?#]|$)/u;

/** Whether a value (already through the browser's input rules) starts with a host name and no scheme. */
export function startsWithHostName(text: string): boolean {
  return BARE_HOST.test(text);
}

/** The address a value is, chain-qualified or bare; null when it is none. */
export function parseAddress(value: string): AddressParts | null {
  if (value.length > MAX_PARSED_LENGTH) return null;
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

/** The e-mail address a value is (lower-cased) and its domain; null when it is none. */
export function parseEmail(value: string): { email: string; domain: string } | null {
  if (value.length > MAX_PARSED_LENGTH) return null;
  const match = EMAIL.exec(value.trim());
  if (!match) return null;
  const domain = (match[1] as string).toLowerCase();
  if (!DOMAIN.test(domain)) return null;
  return { email: value.trim().toLowerCase(), domain };
}
