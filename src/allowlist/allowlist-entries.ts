// THREAT_MIRROR_ALLOWLIST's lines read into entries: what each line allows, by the rules `lookup`
// matches with (src/url/), and why a line is refused. One entry a line; `#` at the start of a line
// or after a space or tab starts a comment, and the comment on an entry's line is its reason.
import { getPublicSuffix } from 'tldts';
import { isIpHost } from '../url/expressions.js';
import { parseAddress, parseEmail } from '../url/value-kinds.js';
import { isHostLevel, readWebUrl } from '../url/web-url.js';

/**
 * How an entry matches. Every entry also matches a threat whose content is exactly its text.
 * - `host`: a bare host, or a URL of a whole host (path `/`, no query): the host and every subdomain;
 * - `url`: a URL with a path or query: that path and below on the host and its subdomains (Safe Browsing's rules);
 * - `address`: a chain-qualified address (that chain only) or a bare one (any chain), folded as lookup folds them;
 * - `email`: the address, lower-cased;
 * - `exact`: anything else: a threat's content exactly.
 */
export type AllowKind = 'host' | 'url' | 'address' | 'email' | 'exact';

export interface AllowEntry {
  /** The file's line (1-based). */
  readonly line: number;
  /** The entry as written, without its comment and surrounding blanks. */
  readonly value: string;
  readonly kind: AllowKind;
  /** The comment on its line; null when it has none. */
  readonly reason: string | null;
  /** host and url: the canonical host, path (`/` for a host) and query (null when none). */
  readonly host: string | null;
  readonly path: string | null;
  readonly query: string | null;
  /** address: as lookup folds it; namespace and chain null for a bare address. */
  readonly address: string | null;
  readonly addressNamespace: string | null;
  readonly addressChain: string | null;
  /** email: lower-cased. */
  readonly email: string | null;
}

/** One version of the file, parsed: what every thread that answers is given. */
export interface Allowlist {
  /** The file as named by THREAT_MIRROR_ALLOWLIST. */
  readonly file: string;
  /** sha256 (hex) of the file's bytes: two reads of the same bytes are the same version. */
  readonly version: string;
  readonly entries: readonly AllowEntry[];
}

/** A line the file must not hold, named by file and line. */
export class AllowlistError extends Error {
  override readonly name = 'AllowlistError';
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    problem: string,
  ) {
    super(`${file}${line === undefined ? '' : ` line ${line}`}: ${problem}`);
  }
}

/** Longer lines are no URL, address or content anyone blocks (lookup parses no longer value). */
export const MAX_LINE_CHARS = 4096;
export const MAX_ENTRIES = 100_000;

const NONE = { host: null, path: null, query: null, address: null, addressNamespace: null, addressChain: null, email: null } as const;
/** C0 controls but tab, DEL and C1 controls: a binary file named by mistake, or a line a terminal would hide. */
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/;
/** Block-list syntaxes that mean "this host and below" elsewhere; here the bare host does. */
const FOREIGN_SYNTAX: ReadonlyArray<[RegExp, string]> = [
  [/^\*\./, 'a wildcard: write the bare host (it covers its subdomains)'],
  [/^(?:\|\||@@)/, 'AdGuard syntax: write the bare host (it covers its subdomains)'],
  [/^(?:0\.0\.0\.0|127\.0\.0\.1|::1?)\s+\S/, 'an /etc/hosts line: write the bare host alone'],
];

/** The entries of the file's lines; throws an AllowlistError naming the first line it refuses. */
export function parseAllowlist(file: string, lines: readonly string[]): AllowEntry[] {
  const entries: AllowEntry[] = [];
  lines.forEach((text, index) => {
    const entry = parseLine(file, index + 1, index === 0 ? text.replace(/^\uFEFF/, '') : text);
    if (entry === undefined) return;
    if (entries.length >= MAX_ENTRIES) throw new AllowlistError(file, index + 1, `more than ${MAX_ENTRIES} entries`);
    entries.push(entry);
  });
  return entries;
}

function parseLine(file: string, line: number, raw: string): AllowEntry | undefined {
  const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  if (text.length > MAX_LINE_CHARS) throw new AllowlistError(file, line, `longer than ${MAX_LINE_CHARS} characters`);
  const control = CONTROL.exec(text);
  if (control !== null) throw new AllowlistError(file, line, `holds the control character U+${control[0].charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`);
  const hash = /(?:^|[ \t])#/.exec(text);
  const value = (hash === null ? text : text.slice(0, hash.index)).trim();
  if (value === '') return undefined;
  const comment = hash === null ? '' : text.slice(hash.index).replace(/^[ \t]*#/, '').trim();
  const entry = { line, value, reason: comment === '' ? null : comment };
  for (const [pattern, hint] of FOREIGN_SYNTAX) {
    if (pattern.test(value)) throw new AllowlistError(file, line, `"${value}" is ${hint}`);
  }
  const address = parseAddress(value);
  if (address !== null) return { ...entry, ...NONE, kind: 'address', ...address };
  const email = parseEmail(value);
  if (email !== null) return { ...entry, ...NONE, kind: 'email', email: email.email };
  const url = readWebUrl(value);
  if (url === null) {
    if (/^[a-z][a-z0-9+.-]*:[/\\]/i.test(value)) throw new AllowlistError(file, line, `"${value}" is not an http(s) URL with a host a browser can open`);
    return { ...entry, ...NONE, kind: 'exact' };
  }
  if (isPublicSuffix(url.host)) {
    throw new AllowlistError(file, line, `"${value}" would allow every site under "${url.host}", a public suffix (or a single label); name the site itself`);
  }
  return { ...entry, ...NONE, kind: isHostLevel(url) ? 'host' : 'url', host: url.host, path: url.path, query: url.query };
}

/** `com`, `co.uk`, `github.io` (private suffixes too), a single label: a host no entry may stand for. IP addresses are hosts of their own. */
function isPublicSuffix(host: string): boolean {
  return !isIpHost(host) && getPublicSuffix(host, { allowPrivateDomains: true }) === host;
}
