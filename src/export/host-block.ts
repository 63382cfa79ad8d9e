// Which URL/PAGE threats block a whole host. Isolated so that it can take the Safe Browsing
// canonicalization (src/url) once that lands: only this function decides "whole host or not".

export type HostBlock =
  | { readonly kind: 'host'; readonly host: string }
  /** Blocks one path (or query) on a host: a DNS entry would block every page of that host. */
  | { readonly kind: 'path-level' }
  /** No web host to speak of: not a URL, another scheme, junk. */
  | { readonly kind: 'not-a-host' };

const SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:/;
const WEB_SCHEMES = new Set(['http:', 'https:']);

/**
 * A URL blocks its whole host when its path is "/" and it has no query (the fragment never reaches
 * the server). Content without a scheme is read as http://content, as browsers and Safe Browsing
 * do, so a bare domain (`evil.example`, `evil.example/`) blocks its host and `evil.example/a` does not.
 */
export function hostBlockOf(content: string): HostBlock {
  const trimmed = content.trim();
  if (trimmed === '' || /[\s\u0000-\u001f]/.test(trimmed)) return { kind: 'not-a-host' };
  let url: URL;
  try {
    url = new URL(SCHEME.test(trimmed) && !/^[^:/]+:\d/.test(trimmed) ? trimmed : `http://${trimmed}`);
  } catch {
    return { kind: 'not-a-host' };
  }
  if (!WEB_SCHEMES.has(url.protocol) || url.hostname === '') return { kind: 'not-a-host' };
  if (url.pathname !== '/' || url.search !== '') return { kind: 'path-level' };
  return { kind: 'host', host: url.hostname };
}
