// The host a browser visits for a URL: Node's `new URL()` is a WHATWG URL parser (ada) that passes
// the web-platform-tests. Block lists carry a host only when the canonicalizer and the browser
// agree on it, so no crafted URL can make a list name a host its visitors never reach (or miss
// the one they do).

/** A scheme, as the canonicalizer tells one: a special scheme always, another unless a port follows ("host:8080"). */
const HAS_SCHEME = /^[\u0000-\u0020]*(?:(?:https?|wss?|ftp):|[a-zA-Z][a-zA-Z0-9+.-]*:(?![0-9]))/i;

/**
 * `new URL(content).hostname` for an http(s) URL, lower-case with IDNs in xn-- form and one
 * trailing dot dropped; content without a scheme is read as `http://content`, as the
 * canonicalizer reads it. Null when a browser would not open it as http(s).
 */
export function browserHost(content: string): string | null {
  let url: URL;
  try {
    url = new URL(HAS_SCHEME.test(content) ? content : `http://${content}`);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  const host = url.hostname.endsWith('.') ? url.hostname.slice(0, -1) : url.hostname;
  return host === '' ? null : host;
}
