// Which entry of the allowlist, if any, allows a threat or a looked-up value. One implementation for
// every place that answers (lookup, exports, the export index and its zone); the view
// enforced_threats says the same in SQL (docs/schema.md), and a test holds the two together.
import { isIpHost } from '../url/expressions.js';
import { parseAddress, parseEmail } from '../url/value-kinds.js';
import { readWebUrl } from '../url/web-url.js';
import type { AllowEntry } from './allowlist-entries.js';

/** What a threat is matched on: its content and the lookup columns derived from it (src/url/lookup-fields.ts). */
export interface ThreatFacts {
  readonly content: string;
  readonly urlExpression: string | null;
  readonly address: string | null;
  readonly addressNamespace: string | null;
  readonly addressChain: string | null;
  readonly email: string | null;
}

interface UrlParts {
  readonly host: string;
  readonly path: string;
  readonly query: string | null;
}

export class AllowMatcher {
  readonly entries: readonly AllowEntry[];
  /** Each map keeps the first entry (the lowest line) for a key: the one named when several allow a thing. */
  readonly #exact = new Map<string, AllowEntry>();
  readonly #emails = new Map<string, AllowEntry>();
  /** Bare addresses under '', chain-qualified ones under `namespace:chain`. */
  readonly #addresses = new Map<string, Map<string, AllowEntry>>();
  /** Host and URL entries by their host. */
  readonly #byHost = new Map<string, AllowEntry[]>();

  constructor(entries: readonly AllowEntry[]) {
    this.entries = entries;
    for (const entry of entries) {
      keepFirst(this.#exact, entry.value, entry);
      if (entry.email !== null) keepFirst(this.#emails, entry.email, entry);
      if (entry.address !== null) {
        const chains = this.#addresses.get(entry.address) ?? new Map<string, AllowEntry>();
        keepFirst(chains, chainKey(entry.addressNamespace, entry.addressChain), entry);
        this.#addresses.set(entry.address, chains);
      }
      if (entry.host !== null) {
        const list = this.#byHost.get(entry.host) ?? [];
        list.push(entry);
        this.#byHost.set(entry.host, list);
      }
    }
  }

  get size(): number {
    return this.entries.length;
  }

  /** The entry that allows this threat (the first in the file when several do), or undefined. */
  threat(facts: ThreatFacts): AllowEntry | undefined {
    let found = this.#exact.get(facts.content);
    const consider = (entry: AllowEntry | undefined): void => {
      if (entry !== undefined && (found === undefined || entry.line < found.line)) found = entry;
    };
    if (facts.urlExpression !== null) consider(this.#url(splitExpression(facts.urlExpression)));
    if (facts.address !== null) consider(this.#address(facts.address, facts.addressNamespace, facts.addressChain));
    if (facts.email !== null) consider(this.#emails.get(facts.email));
    return found;
  }

  /**
   * The entry that covers a looked-up value itself, by the rules lookup matches it with: every
   * threat that matches such a value is allowed, whatever blocks it (the allowlist comes first).
   */
  value(value: string): AllowEntry | undefined {
    const trimmed = value.trim();
    let found = this.#exact.get(value) ?? this.#exact.get(trimmed);
    const consider = (entry: AllowEntry | undefined): void => {
      if (entry !== undefined && (found === undefined || entry.line < found.line)) found = entry;
    };
    const url = this.#byHost.size === 0 ? null : readWebUrl(value);
    if (url !== null) {
      consider(this.#url(url));
      // As coveringExpressions reads a looked-up path: runs of slashes collapsed too.
      const collapsed = url.path.replace(/\/{2,}/g, '/');
      if (collapsed !== url.path) consider(this.#url({ ...url, path: collapsed }));
    }
    const address = this.#addresses.size === 0 ? null : parseAddress(trimmed);
    // A bare value may be any chain: only a bare entry covers it whole.
    if (address?.address != null) consider(this.#address(address.address, address.addressNamespace, address.addressChain));
    const email = this.#emails.size === 0 ? null : parseEmail(trimmed);
    if (email !== null) consider(this.#emails.get(email.email));
    return found;
  }

  /** The hosts allowed as a whole (host entries), once each, in file order: the RPZ's passthru names. */
  wholeHosts(): string[] {
    return [...new Set(this.entries.filter((entry) => entry.kind === 'host').map((entry) => entry.host as string))];
  }

  /** The host and URL entries on the URL's host or a parent of it (any depth) that cover its path. */
  #url(url: UrlParts): AllowEntry | undefined {
    let found: AllowEntry | undefined;
    for (const host of hostAndParents(url.host)) {
      for (const entry of this.#byHost.get(host) ?? []) {
        if (coversPath(entry, url.path, url.query) && (found === undefined || entry.line < found.line)) found = entry;
      }
    }
    return found;
  }

  #address(address: string, namespace: string | null, chain: string | null): AllowEntry | undefined {
    const chains = this.#addresses.get(address);
    if (chains === undefined) return undefined;
    const bare = chains.get('');
    const qualified = namespace === null ? undefined : chains.get(chainKey(namespace, chain));
    if (bare === undefined || qualified === undefined) return bare ?? qualified;
    return bare.line < qualified.line ? bare : qualified;
  }
}

function keepFirst<K>(map: Map<K, AllowEntry>, key: K, entry: AllowEntry): void {
  if (!map.has(key)) map.set(key, entry);
}

function chainKey(namespace: string | null, chain: string | null): string {
  return namespace === null ? '' : `${namespace}:${chain ?? ''}`;
}

/**
 * Safe Browsing's path rule as lookup applies it: an entry with a query covers that exact path and
 * query; `/p` covers `/p` (any query) and everything below `/p/`; `/p/` covers `/p/` and below; `/` everything.
 */
export function coversPath(entry: Pick<AllowEntry, 'path' | 'query'>, path: string, query: string | null): boolean {
  const entryPath = entry.path ?? '/';
  if (entry.query !== null) return path === entryPath && query === entry.query;
  if (path === entryPath) return true;
  return path.startsWith(entryPath.endsWith('/') ? entryPath : `${entryPath}/`);
}

/** The host, then each parent down to its last label (an IP address is only itself). */
export function* hostAndParents(host: string): Generator<string> {
  yield host;
  if (isIpHost(host)) return;
  for (let dot = host.indexOf('.'); dot >= 0; dot = host.indexOf('.', dot + 1)) yield host.slice(dot + 1);
}

/** A stored canonical expression `host/path?query` in its parts. */
export function splitExpression(expression: string): UrlParts {
  const slash = expression.indexOf('/');
  const host = slash < 0 ? expression : expression.slice(0, slash);
  const rest = slash < 0 ? '/' : expression.slice(slash);
  const question = rest.indexOf('?');
  return question < 0 ? { host, path: rest, query: null } : { host, path: rest.slice(0, question), query: rest.slice(question + 1) };
}

/** The matcher of THREAT_MIRROR_ALLOWLIST's entries; undefined when it is unset (nothing is allowed). */
export function matcherFor(entries: readonly AllowEntry[] | undefined): AllowMatcher | undefined {
  return entries === undefined ? undefined : new AllowMatcher(entries);
}
