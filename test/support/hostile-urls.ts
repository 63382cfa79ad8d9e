// Generated hostile spellings of URLs (fast-check), aimed at the branches where URL readers have
// disagreed with the browser: schemes without slashes, C0 controls before them, tab/CR/LF in and
// after the scheme, userinfo (`victim@host`) and `host\@victim`, ports, IDN and punycode hosts,
// IPv4 and IPv6 spellings, deep subdomains, percent-encoded dots and slashes, Unicode spaces after
// the path, queries, and fragments and userinfo past 4,096 characters. And the oracle: Node's
// `new URL()`, a WHATWG parser that passes the web-platform-tests.
import fc from 'fast-check';

/** The seed of every property over these (a failure prints its own seed and path to replay). */
export const PROPERTY_SEED = 37_037;
/** Runs of each property: a few seconds in `npm test`; PROPERTY_RUNS=20000 (or more) runs them longer. */
export function propertyRuns(defaultRuns: number): number {
  const runs = Number(process.env.PROPERTY_RUNS ?? process.env.THREAT_MIRROR_PROPERTY_RUNS ?? defaultRuns);
  return Number.isInteger(runs) && runs > 0 ? runs : defaultRuns;
}

/** Hosts worth blocking, a few sharing a registrable domain, IDN and punycode among them. */
export const NAMED_HOSTS = [
  'evil-one.com', 'customer-portal.com', 'sites.google.com', 'drive.google.com', 'docs.google.com', 'wallet-drainer.net', 'login.bank-phish.co.uk',
  'bücher-konto.com', 'xn--bcher-konto-thb.com', 'раураl-login.com', 'a.b.c.d.evil48.com', 'x.y.a.b.c.d.evil48.com', 'evil-two.xyz', 'claim-airdrop.app',
];
/** Hosts no list may carry, or spellings of them. */
const OTHER_HOSTS = ['1.2.3.4', '0x7f.1', '3279880203', '[2001:0db8:0:0::1]', '[2001:db8::1]', '[::ffff:1.2.3.4]', 'rpz-ip.evil-one.com', 'com', 'github.io', 'evil-one.example', 'evil..com', 'EVIL-ONE.COM', 'evil-one.com.', '%65vil-one.com', 'evil\u3002one.com'];
const PREFIXES = ['', '', '', '', ' ', '\u0001', '\u0000 ', '\u001f\u0001\t'];
/** '' is a bare host (read as http://…). */
const SCHEMES = ['https://', 'http://', 'https://', 'HTTPS://', 'http:', 'https:', 'http:/', 'http:\\\\', 'ht\ttps://', 'http:\t//', 'htt\np://', 'https:\r\n//', '', ''];
const USERINFO = ['victim.com@', 'user:pass@', 'bank.example.com@', ':@'];
const PORTS = ['', '', '', ':80', ':443', ':8080', ':'];
const PATHS = [
  '', '/', '/', '/', '/x', '/login/verify', '/view/phish-kit/%2e%2e%2f%2e%2e%2f', '/forms/d/x/viewform%2F..%2F..%2F..', '/\u3000', '/\u00a0', '/\ufeff', '/\u2028',
  '//', '/a/../', '/%2e/', '/./', '\\', '\\@victim.com/', '/@victim.com/', '/x\t/', '/%252e%252e/', '/%2F', '/a%2fb',
];
const QUERIES = ['', '', '', '', '?', '?q=1', '?next=/%2F..'];
const LONG = 'f'.repeat(4_200);
const FRAGMENTS = ['', '', '', '#', '#frag', `#${LONG}`];

const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,6}[a-z0-9]$/);

/** A host: a named one (or a subdomain of it at some depth), another spelling, or a generated domain. */
export const hostArbitrary: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fc.array(label, { maxLength: 6 }), fc.constantFrom(...NAMED_HOSTS)).map(([labels, host]) => [...labels, host].join('.')) },
  { weight: 2, arbitrary: fc.constantFrom(...OTHER_HOSTS) },
  { weight: 1, arbitrary: fc.domain() },
);

function spelled(paths: readonly string[], queries: readonly string[]): fc.Arbitrary<string> {
  return fc
    .record({
      prefix: fc.constantFrom(...PREFIXES),
      scheme: fc.constantFrom(...SCHEMES),
      userinfo: fc.oneof({ weight: 8, arbitrary: fc.constant('') }, { weight: 2, arbitrary: fc.constantFrom(...USERINFO) }, { weight: 1, arbitrary: fc.constant(`${'u'.repeat(4_200)}@`) }),
      host: hostArbitrary,
      port: fc.constantFrom(...PORTS),
      path: fc.constantFrom(...paths),
      query: fc.constantFrom(...queries),
      fragment: fc.constantFrom(...FRAGMENTS),
    })
    .map(({ prefix, scheme, userinfo, host, port, path, query, fragment }) => `${prefix}${scheme}${scheme === '' ? '' : userinfo}${host}${port}${path}${query}${fragment}`);
}

/** A content (or looked-up value, or allowlist line) as hostile data spells a URL. */
export const hostileUrl: fc.Arbitrary<string> = spelled(PATHS, QUERIES);

/** The same spellings of a URL whose browser path is "/" with no query: a whole host, however written. */
export const hostileHostBlock: fc.Arbitrary<string> = spelled(['', '/', '/./', '/a/..', '/%2e/', '\\'], ['']);

/**
 * The browser's reading of a content, as Node's `new URL()` gives it: parsed as written when it has
 * a scheme, else as `http://` + the content (a bare host, as Safe Browsing reads it). Null when it
 * opens no http(s) URL.
 */
export function browserUrl(content: string): URL | null {
  const text = content.replace(/^[\u0000-\u0020]+/, '').replace(/[\t\n\r]/g, '');
  // A scheme is one unless a port follows it ("evil.example:8080/x" is a host and a port), but http(s) always is.
  const withScheme = /^https?:/i.test(text) || /^[a-zA-Z][a-zA-Z0-9+.-]*:(?![0-9])/.test(text);
  let url: URL;
  try {
    url = new URL(withScheme ? content : `http://${text}`);
  } catch {
    return null;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
}

/** The browser's host, one trailing dot dropped (the DNS name is the same). */
export function browserHostOf(url: URL): string {
  return url.hostname.endsWith('.') ? url.hostname.slice(0, -1) : url.hostname;
}

/** Whether the browser's URL is a whole host: path `/` and no query (a bare `?` is a query). */
export function browserHostLevel(url: URL): boolean {
  const beforeHash = url.href.split('#')[0] as string;
  return url.pathname === '/' && !beforeHash.includes('?');
}

/**
 * Allowlist lines for a third of the contents' browser hosts (`third`: which third), each spelled
 * as one of `spellings` ("HOST" replaced), with a comment: the lines a user might keep.
 */
export function allowlistLinesFor(contents: readonly string[], third: number, spellings: readonly string[]): string[] {
  const hosts = [...new Set(contents.map(browserUrl).flatMap((url) => (url === null ? [] : [browserHostOf(url)])))].sort();
  return hosts.filter((_, index) => index % 3 === third).map((host, index) => `${(spellings[index % spellings.length] as string).replace('HOST', host)}   # ticket ${index}`);
}

/** Counts of inputs that reached each checked branch: a property asserts a floor on each, so that it cannot pass by checking nothing. */
export class BranchCounts {
  readonly #counts = new Map<string, number>();

  hit(branch: string, times = 1): void {
    this.#counts.set(branch, (this.#counts.get(branch) ?? 0) + times);
  }

  of(branch: string): number {
    return this.#counts.get(branch) ?? 0;
  }

  toString(): string {
    return [...this.#counts].map(([branch, count]) => `${branch}=${count}`).join(', ');
  }
}
