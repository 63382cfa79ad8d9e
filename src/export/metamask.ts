// `metamask`: the configuration JSON of MetaMask's eth-phishing-detect. Its detector blocks a
// listed host and every subdomain of it, so a host whose parent is listed is dropped (as the
// project's own clean-config does); hosts are already in punycode (xn--) form.
import type { HostListContext } from './host-header.js';

/** Upstream's config.json has format version 2 and tolerance 2; the fuzzylist is left empty. */
const VERSION = 2;
const TOLERANCE = 2;

export function hostsWithoutListedParent(hosts: readonly string[]): string[] {
  const listed = new Set(hosts);
  return hosts.filter((host) => {
    const labels = host.split('.');
    // A parent down to the registrable level; the last label alone is never an entry here.
    for (let index = 1; index < labels.length - 1; index += 1) {
      if (listed.has(labels.slice(index).join('.'))) return false;
    }
    return true;
  });
}

export function metamaskBlacklist(context: HostListContext): string[] {
  return hostsWithoutListedParent(context.selection.hosts);
}

export function* renderMetamask(context: HostListContext): Generator<string> {
  const config = { version: VERSION, tolerance: TOLERANCE, fuzzylist: [], whitelist: [], blacklist: metamaskBlacklist(context) };
  yield `${JSON.stringify(config, null, 2)}\n`;
}
