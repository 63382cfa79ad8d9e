// `suricata`: a dataset file (Suricata's dataset format: one entry per line, a `string` entry
// base64-encoded) of exact host names, and with --rules sample rules matching it on DNS queries
// and TLS SNI. The dataset format has no comments, so the counts go to the command's summary.
import type { HostListContext } from './host-header.js';

export const DATASET_NAME = 'threat-mirror-hosts';
export const DATASET_FILE = 'threat-mirror-hosts.lst';

export function* renderSuricataDataset(context: HostListContext): Generator<string> {
  for (const host of context.selection.hosts.sorted()) yield `${Buffer.from(host, 'utf8').toString('base64')}\n`;
}

/** sids in the range the Suricata docs leave to local rules (1000000–1999999). */
export function* renderSuricataRules(): Generator<string> {
  const dataset = `dataset:isset,${DATASET_NAME},type string,load ${DATASET_FILE}`;
  yield '# threat-mirror sample rules: alert on DNS queries and TLS SNI naming a blocked host exactly.\n';
  yield `# The dataset (threat-mirror export --format suricata) must be ${DATASET_FILE} beside this file;\n`;
  yield '# Suricata resolves a relative load path from the rule file\'s folder.\n';
  yield `alert dns any any -> any any (msg:"threat-mirror blocked host in DNS query"; dns.query; ${dataset}; classtype:bad-unknown; sid:1018001; rev:1;)\n`;
  yield `alert tls any any -> any any (msg:"threat-mirror blocked host in TLS SNI"; tls.sni; ${dataset}; classtype:bad-unknown; sid:1018002; rev:1;)\n`;
}
