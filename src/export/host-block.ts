// Which URL/PAGE threats block a whole host, decided on the Safe Browsing canonical form the
// lookup uses too (src/url): `HTTP://Evil.Example:80/./#x` blocks evil.example as a whole,
// `https://docs-host.example/forms/abc` blocks one path and must not become a DNS entry.
import { browserHost } from '../url/browser-host.js';
import { canonicalizeUrl, isHostBlock } from '../url/canonical-url.js';

export type HostBlock =
  | { readonly kind: 'host'; readonly host: string }
  /** Blocks one path (or query) on a host: a DNS entry would block every page of that host. */
  | { readonly kind: 'path-level' }
  /** No web host to speak of: not a URL, another scheme, junk. */
  | { readonly kind: 'not-a-host' };

/** DNS, IDS and wallet lists protect the web; an ftp:// or ipfs:// "host" is no name to block. */
const WEB_SCHEMES = new Set(['http', 'https']);

/** Content without a scheme is read as http://content (Safe Browsing's rule), so a bare domain blocks its host. */
export function hostBlockOf(content: string): HostBlock {
  const url = canonicalizeUrl(content);
  if (url === null || !WEB_SCHEMES.has(url.scheme)) return { kind: 'not-a-host' };
  if (!isHostBlock(url)) return { kind: 'path-level' };
  // The browser's host is the one that counts: a content it reads with another host (a crafted
  // "\\@", an escape, an empty label), or cannot read, gives no entry rather than a wrong one.
  return browserHost(content) === url.host ? { kind: 'host', host: url.host } : { kind: 'not-a-host' };
}
