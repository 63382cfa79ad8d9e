// `metamask`: the configuration JSON of MetaMask's eth-phishing-detect. Its detector blocks a
// listed host and every subdomain of it, so a host whose parent is listed is dropped (as the
// project's own clean-config does); hosts are already in punycode (xn--) form. The list is
// written as it is read, parents first (ordered by reversed labels), never held whole in memory.
import type { HostListContext } from './host-header.js';

/** Upstream's config.json has format version 2 and tolerance 2; the fuzzylist is left empty. */
const VERSION = 2;
const TOLERANCE = 2;

/** `counts.entries`: the hosts listed, known once rendered (ordering the hosts by reversed labels is most of the cost: done once). */
export function* renderMetamask(context: HostListContext, counts: { entries: number }): Generator<string> {
  yield `{\n  "version": ${VERSION},\n  "tolerance": ${TOLERANCE},\n  "fuzzylist": [],\n  "whitelist": [],\n  "blacklist": [`;
  let first = true;
  counts.entries = 0;
  for (const host of context.selection.hosts.withoutListedParent()) {
    yield `${first ? '' : ','}\n    ${JSON.stringify(host)}`;
    first = false;
    counts.entries += 1;
  }
  yield first ? ']\n}\n' : '\n  ]\n}\n';
}
