// Safe Browsing v4 host-suffix / path-prefix expressions, built from the URL reader's result
// (web-url.ts), and threat-mirror's coverage rule built on them.
import type { WebUrl } from './web-url.js';

const MAX_HOST_SUFFIXES = 4;
const MAX_PATH_PREFIXES = 4;
/** Coverage looks this many directories deep; a block below it still matches its own path exactly. */
const MAX_COVERING_DIRECTORIES = 16;
/**
 * Characters of path and query an expression holds. A longer one is cut there and ends with
 * CUT_MARK, on the stored side and the looked-up side alike: two URLs of one host whose first
 * 4,096 characters of path and query agree match each other. Nothing is refused for its length.
 */
export const MAX_EXPRESSION_PATH = 4096;
/** A character no expression holds (they are ASCII): marks one cut at MAX_EXPRESSION_PATH. */
export const CUT_MARK = '\u2026';

/** An IPv4 dotted quad or a bracketed IPv6 address: hosts that have no parent domains. */
export function isIpHost(host: string): boolean {
  return host.startsWith('[') || /^(?:\d{1,3}\.){3}\d{1,3}$/.test(host);
}

/** The expression of a host and a path with its query (`/a?b`), cut at MAX_EXPRESSION_PATH. */
export function expressionOf(host: string, pathAndQuery: string): string {
  return pathAndQuery.length <= MAX_EXPRESSION_PATH ? `${host}${pathAndQuery}` : `${host}${pathAndQuery.slice(0, MAX_EXPRESSION_PATH)}${CUT_MARK}`;
}

/** What a URL threat is stored under (threats.url_expression): host/path?query. */
export function urlExpression(url: WebUrl): string {
  return expressionOf(url.host, url.query === null ? url.path : `${url.path}?${url.query}`);
}

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

/** Every parent of a host at any depth, the top-level domain alone excluded; none for an address. */
export function parentHosts(host: string): string[] {
  if (isIpHost(host)) return [];
  const parents: string[] = [];
  for (let dot = host.indexOf('.'); dot >= 0 && host.indexOf('.', dot + 1) >= 0; dot = host.indexOf('.', dot + 1)) parents.push(host.slice(dot + 1));
  return parents;
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
 */
export function urlExpressions(url: WebUrl): string[] {
  const paths = pathPrefixes(url.path, url.query);
  return hostSuffixes(url.host).flatMap((host) => paths.map((path) => expressionOf(host, path)));
}

/**
 * Every stored threat expression that covers this URL under threat-mirror's rule: the specification's
 * expressions, plus, on each host suffix, every ancestor directory of the path (up to 16 deep) both
 * with and without its trailing slash; the same for the path with runs of slashes collapsed (a
 * server reads `//a` as `/a`); and a host-level block (`parent/`) of every parent at any depth.
 * So a block of "host/forms/abc" covers "host/forms/abc" and "host/forms/abc/…" but not
 * "host/forms/abcdef" nor "host/other"; a block of "host/" covers every page of host and of its
 * subdomains; a block with a query covers only that exact URL.
 */
export function coveringExpressions(url: WebUrl): string[] {
  const paths = coveringPaths(url.path);
  const query = url.query === null ? [] : [`${url.path}?${url.query}`];
  const hosts = hostSuffixes(url.host);
  const expressions: string[] = [];
  for (const host of hosts) for (const path of [...query, ...paths]) expressions.push(expressionOf(host, path));
  // Host-level blocks of the parents Safe Browsing's five labels leave out.
  for (const parent of parentHosts(url.host)) if (!hosts.includes(parent)) expressions.push(`${parent}/`);
  return expressions;
}

/** The path, "/" and every ancestor directory (up to 16 deep) with and without its slash; the same for the path with runs of slashes collapsed. */
function coveringPaths(path: string): string[] {
  const paths = new Set(pathPrefixes(path, null));
  for (const form of path.includes('//') ? [path, path.replace(/\/{2,}/g, '/')] : [path]) {
    paths.add(form);
    let prefix = '';
    for (const directory of form.split('/').slice(1, -1).slice(0, MAX_COVERING_DIRECTORIES)) {
      prefix += `/${directory}`;
      paths.add(prefix);
      paths.add(`${prefix}/`);
    }
  }
  return [...paths];
}
