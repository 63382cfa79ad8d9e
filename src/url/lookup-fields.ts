// The columns derived from a threat's content when its row is written: what lookup, the allowlist,
// every export, the export index and the zone read, so that none of them reads a content again.
// URLs through the one URL reader (web-url.ts), everything else through the one classifier
// (value-kinds.ts).
import { getDomain } from 'tldts';
import { blockableHost, type HostRefusal } from './blockable-host.js';
import { urlExpression } from './expressions.js';
import { parseAddress, parseEmail } from './value-kinds.js';
import { isHostLevel, readWebUrl } from './web-url.js';

/** Why a URL or PAGE threat gives no host entry: it blocks a path (or query) only, or its host is no name a list may carry. */
export type ExportLeftOut = 'pathLevel' | HostRefusal;

export interface LookupFields {
  /** URL and PAGE: the host a browser visits (web-url.ts). */
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
  /** URL and PAGE: the Safe Browsing expression (host/path?query) lookups and the allowlist match against. */
  readonly urlExpression: string | null;
  /** URL and PAGE that block a whole host (browser path `/`, no query): the DNS name every host format and the zone carry. */
  readonly exportHost: string | null;
  /** URL and PAGE without an exportHost: why. */
  readonly exportLeftOut: ExportLeftOut | null;
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
  exportHost: null,
  exportLeftOut: null,
});

/**
 * The asset types whose contents are read as each kind of value: only their rows carry that kind's
 * fields, so only their threats match such a value beyond its exact content. Read here to derive
 * the fields; by lookup/verdict.ts to know which types a value's answer depends on; by the host
 * exports, STIX and lookup's same_host. A change re-derives stored rows only with a new
 * LOOKUP_RULES_VERSION (lookup-rules.ts).
 */
export const TYPES_READ_AS: Readonly<Record<'url' | 'address' | 'email', readonly string[]>> = {
  url: ['PAGE', 'URL'],
  address: ['ADDRESS'],
  email: ['EMAIL'],
};

export function deriveLookupFields(type: string, content: string): LookupFields {
  if (TYPES_READ_AS.url.includes(type)) return urlFields(content);
  if (TYPES_READ_AS.address.includes(type)) return { ...NONE, ...parseAddress(content) };
  if (!TYPES_READ_AS.email.includes(type)) return NONE;
  const email = parseEmail(content);
  return email === null ? NONE : { ...NONE, email: email.email, emailDomain: email.domain };
}

function urlFields(content: string): LookupFields {
  const url = readWebUrl(content);
  if (url === null) return { ...NONE, exportLeftOut: 'notAHost' };
  const listed = isHostLevel(url) ? blockableHost(url.host) : { problem: 'pathLevel' as const };
  return {
    ...NONE,
    host: url.host,
    registrableDomain: registrableDomainOf(url.host),
    urlExpression: urlExpression(url),
    exportHost: typeof listed === 'string' ? listed : null,
    exportLeftOut: typeof listed === 'string' ? null : listed.problem,
  };
}

export function registrableDomainOf(host: string): string | null {
  return getDomain(host, { allowPrivateDomains: true }) ?? null;
}
