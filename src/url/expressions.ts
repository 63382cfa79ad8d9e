// Safe Browsing v4 host-suffix / path-prefix expressions, and threat-mirror's coverage rule built on them.
import { canonicalizeUrl, isIpHost, type CanonicalUrl } from './canonical-url.js';

const MAX_HOST_SUFFIXES = 4;
const MAX_PATH_PREFIXES = 4;
/** Coverage looks this many directories deep; a block below it still matches its own path exactly. */
const MAX_COVERING_DIRECTORIES = 16;

/** The exact host and up to four suffixes made of its last five components, the top-level domain alone excluded. */
export function hostSuffixes(host: string): string[] {
  if (isIpHost(host)) return [host];
  const labels = host.split('.');
  const hosts = [host];
  for (let start = Math.max(1, labels.length - 5); start <= labels.length - 2 && hosts.length <= MAX_HOST_SUFFIXES; start++) {
    hosts.push(labels.slice(start).join('.'));
  }
  return hosts;
}

/** The exact path with and without the query, then "/" and up to three deeper directory prefixes: at most six. */
export function pathPrefixes(path: string, query: string | null): string[] {
  const paths = query === null ? [path] : [`${path}?${query}`, path];
  const directories = path.split('/').slice(1, -1);
  let prefix = '/';
  for (let depth = 0; depth < MAX_PATH_PREFIXES; depth++) {
    if (!paths.includes(prefix)) paths.push(prefix);
    const next = directories[depth];
    if (next === undefined) break;
    prefix += `${next}/`;
  }
  return paths;
}

/**
 * The specification's suffix/prefix expressions of a URL (at most 5 hosts × 6 paths), host first:
 * "a.b.c/1/2.html?param=1", "a.b.c/1/2.html", "a.b.c/", "a.b.c/1/", "b.c/1/2.html?param=1", …
 * Empty for input that does not canonicalize.
 */
export function urlExpressions(input: string | CanonicalUrl): string[] {
  const url = typeof input === 'string' ? canonicalizeUrl(input) : input;
  if (url === null) return [];
  const paths = pathPrefixes(url.path, url.query);
  return hostSuffixes(url.host).flatMap((host) => paths.map((path) => `${host}${path}`));
}

/**
 * Every stored threat expression that covers this URL under threat-mirror's rule: the specification's
 * expressions, plus, on each host suffix, every ancestor directory of the path (up to 16 deep) both
 * with and without its trailing slash. So a block of "host/forms/abc" covers "host/forms/abc" and
 * "host/forms/abc/…" but not "host/forms/abcdef" nor "host/other"; a block of "host/" covers every page
 * of host and its subdomains; a block with a query covers only that exact URL.
 */
export function coveringExpressions(input: string | CanonicalUrl): string[] {
  const url = typeof input === 'string' ? canonicalizeUrl(input) : input;
  if (url === null) return [];
  const paths = new Set(pathPrefixes(url.path, url.query));
  const directories = url.path.split('/').slice(1, -1).slice(0, MAX_COVERING_DIRECTORIES);
  let prefix = '';
  for (const directory of directories) {
    prefix += `/${directory}`;
    paths.add(prefix);
    paths.add(`${prefix}/`);
  }
  const hosts = hostSuffixes(url.host);
  return hosts.flatMap((host) => [...paths].map((path) => `${host}${path}`));
}
