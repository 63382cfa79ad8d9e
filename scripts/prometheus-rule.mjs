// Writes deploy/kubernetes/prometheusrule.yaml from deploy/prometheus/threat-mirror-rules.yml, the
// one source of the alerts: `node scripts/prometheus-rule.mjs` after changing the rules.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const rules = parse(readFileSync(join(root, 'deploy', 'prometheus', 'threat-mirror-rules.yml'), 'utf8'));
const header = `# Optional, with the Prometheus Operator: the alerts of deploy/prometheus/threat-mirror-rules.yml (its
# comments say why each fires) as a PrometheusRule. Written by scripts/prometheus-rule.mjs from that
# file; npm test fails when the two differ.
`;
const resource = {
  apiVersion: 'monitoring.coreos.com/v1',
  kind: 'PrometheusRule',
  metadata: { name: 'threat-mirror', labels: { 'app.kubernetes.io/name': 'example-app' } },
  spec: rules,
};
writeFileSync(join(root, 'deploy', 'kubernetes', 'prometheusrule.yaml'), header + stringify(resource, { lineWidth: 0 }));
