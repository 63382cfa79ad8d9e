// deploy/kubernetes/, validated offline: every object against the Kubernetes schemas (kubernetes-models;
// kubectl would need a cluster even for --dry-run=client), the Prometheus Operator's resources
// against its CRDs' schemas, the embedded alerts by promtool, and what the schemas cannot say (they
// accept unknown fields: a misspelt securityContext key would pass them) asserted field by field.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { skipWithout } from './support/judges.js';
import { tempDir } from './support/temp.js';

const ROOT = join(import.meta.dirname, '..');
const FOLDER = join(ROOT, 'deploy', 'kubernetes');

type Manifest = Record<string, any>;

/** The model that validates each kind the folder may hold; any other kind fails the test. */
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'apps/v1 Deployment': Deployment,
  'v1 Secret': Secret,
  'v1 ConfigMap': ConfigMap,
  'v1 Service': Service,
  'monitoring.coreos.com/v1 ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1 PrometheusRule': PrometheusRule,
};

function manifests(): Array<{ file: string; object: Manifest }> {
  return readdirSync(FOLDER)
    .filter((file) => file.endsWith('.yaml') || file.endsWith('.yml'))
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(FOLDER, file), 'utf8')).map((document) => {
        expect(document.errors, file).toEqual([]);
        return { file, object: document.toJS() as Manifest };
      }),
    );
}

function find(kind: string): Manifest {
  const found = manifests().find(({ object }) => object.kind === kind);
  expect(found, `no ${kind} in deploy/kubernetes`).toBeDefined();
  return found?.object as Manifest;
}

function validationError(model: new (data: any) => { validate(): void }, object: Manifest): string | undefined {
  try {
    new model(object).validate();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

describe('Kubernetes manifests', () => {
  it('validate against the Kubernetes schemas and the Prometheus Operator CRDs', () => {
    const all = manifests();
    expect(all.map(({ object }) => object.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'Deployment', 'PrometheusRule', 'Secret', 'Secret', 'Service', 'ServiceMonitor']);
    for (const { file, object } of all) {
      const model = MODELS[`${object.apiVersion} ${object.kind}`];
      expect(model, `${file}: no schema for ${object.apiVersion} ${object.kind}`).toBeDefined();
      expect(validationError(model as (typeof MODELS)[string], object), file).toBeUndefined();
    }
  });

  it('are judged for real: the same schemas refuse a probe port of the wrong type and a memory limit that is no quantity', () => {
    const deployment = find('Deployment');
    const badPort = structuredClone(deployment);
    badPort.spec.template.spec.initContainers[0].livenessProbe.httpGet.port = { name: 'metrics' };
    expect(validationError(Deployment, badPort)).toMatch(/livenessProbe\/httpGet\/port/);
    const badMemory = structuredClone(deployment);
    badMemory.spec.template.spec.initContainers[0].resources.limits.memory = '160 MB';
    expect(validationError(Deployment, badMemory)).toMatch(/resources\/limits\/memory/);
    const badRule = structuredClone(find('PrometheusRule'));
    badRule.spec.groups[0].rules[0].for = 5;
    expect(validationError(PrometheusRule, badRule)).toMatch(/for/);
  });

  it('run the sidecar beside the application as the docs say: shared emptyDir, read-only for the application, key from a Secret file, probes, hardening, limits', () => {
    const pod = find('Deployment').spec.template.spec;
    const [sidecar, ...otherInit] = pod.initContainers as Manifest[];
    const [app, ...others] = pod.containers as Manifest[];
    expect(otherInit).toEqual([]);
    expect(others).toEqual([]);
    // A native sidecar: started before the application, running beside it.
    expect(sidecar?.restartPolicy).toBe('Always');
    const mirror = (pod.volumes as Manifest[]).find((volume) => volume.name === 'mirror');
    expect(mirror?.emptyDir).toBeDefined();
    expect(sidecar?.volumeMounts).toContainEqual({ name: 'mirror', mountPath: '/data' });
    expect(app?.volumeMounts).toContainEqual({ name: 'mirror', mountPath: '/mirror', readOnly: true });
    const env = Object.fromEntries((sidecar?.env as Manifest[]).map((variable) => [variable.name, variable]));
    expect(env.THREAT_MIRROR_DB?.value).toBe('/data/threat-mirror.db');
    // The key only as a file from the Secret: no key variable holds a value.
    expect(Object.keys(env).filter((name) => /^THREAT_MIRROR_API_KEY(_[A-Z0-9_]+)?$/.test(name) && !name.endsWith('_FILE'))).toEqual([]);
    const keyFile = env.THREAT_MIRROR_API_KEY_FILE?.value as string;
    const keyVolume = (pod.volumes as Manifest[]).find((volume) => volume.secret !== undefined);
    const keyMount = (sidecar?.volumeMounts as Manifest[]).find((mount) => mount.name === keyVolume?.name);
    expect(keyMount?.readOnly).toBe(true);
    expect(keyFile.startsWith(`${keyMount?.mountPath}/`)).toBe(true);
    const secret = manifests().find(({ object }) => object.kind === 'Secret' && object.metadata.name === keyVolume?.secret.secretName)?.object as Manifest;
    expect(secret, `no Secret ${keyVolume?.secret.secretName}`).toBeDefined();
    expect(Object.keys(secret.stringData ?? secret.data)).toContain(keyFile.slice(`${keyMount?.mountPath}/`.length));
    // Probes on the endpoints docs/container.md gives them, on the port the daemon serves.
    expect(env.THREAT_MIRROR_HTTP_PORT?.value).toBe(String(sidecar?.ports[0].containerPort));
    expect(sidecar?.startupProbe.httpGet).toEqual({ path: '/startupz', port: 'metrics' });
    expect(sidecar?.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(sidecar?.readinessProbe.httpGet).toEqual({ path: '/startupz', port: 'metrics' });
    expect(sidecar?.ports).toContainEqual({ name: 'metrics', containerPort: 9464 });
    for (const container of [sidecar, app]) {
      expect(container?.securityContext, container?.name).toEqual({
        runAsNonRoot: true,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
      });
      expect(container?.resources.requests.memory, container?.name).toBeDefined();
      expect(container?.resources.limits.memory, container?.name).toBeDefined();
    }
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000 });
    // The limit docs/container.md derives from measured runs, and the one test/container/check.sh runs the image with.
    const limit = sidecar?.resources.limits.memory as string;
    expect(readFileSync(join(ROOT, 'docs', 'container.md'), 'utf8').includes(`memory: ${limit}`), `docs/container.md shows the limit memory: ${limit}`).toBe(true);
  });

  it('show which pod replicates and which restore: the primary beside Litestream, whose replica every sidecar restores from', () => {
    const deployments = manifests().filter(({ object }) => object.kind === 'Deployment').map(({ object }) => object);
    const primary = deployments.find((deployment) => deployment.metadata.name === 'threat-mirror-primary') as Manifest;
    const fleet = find('Deployment');
    // One writer per replica path: one pod, never two at once.
    expect(primary.spec.replicas).toBe(1);
    expect(primary.spec.strategy).toEqual({ type: 'Recreate' });
    const containers = primary.spec.template.spec.containers as Manifest[];
    const mirror = containers.find((container) => container.name === 'threat-mirror') as Manifest;
    const litestream = containers.find((container) => container.name === 'litestream') as Manifest;
    const envOf = (container: Manifest): Record<string, Manifest> => Object.fromEntries((container.env as Manifest[]).map((variable) => [variable.name, variable]));
    const primaryEnv = envOf(mirror);
    expect(primaryEnv.THREAT_MIRROR_CHECKPOINTS?.value).toBe('external');
    // Litestream replicates the primary's file to the URL the fleet's sidecars restore from.
    const config = parse(find('ConfigMap').data['litestream.yml']) as { dbs: Array<{ path: string; replicas: Array<{ url: string }> }> };
    expect(config.dbs[0]?.path).toBe(primaryEnv.THREAT_MIRROR_DB?.value);
    const replica = config.dbs[0]?.replicas[0]?.url;
    expect(litestream.args).toEqual(['replicate', '-config', '/etc/litestream/litestream.yml']);
    const sidecar = (fleet.spec.template.spec.initContainers as Manifest[])[0] as Manifest;
    expect(envOf(sidecar).THREAT_MIRROR_RESTORE_FROM?.value).toBe(replica);
    expect(primaryEnv.THREAT_MIRROR_RESTORE_FROM?.value).toBe(replica);
    // The bucket's credentials from one Secret, in every container that talks to it; never a value in the manifest.
    const secret = manifests().find(({ object }) => object.kind === 'Secret' && object.metadata.name === 'threat-mirror-replica')?.object as Manifest;
    for (const container of [mirror, litestream, sidecar]) {
      const env = envOf(container);
      for (const name of ['LITESTREAM_ACCESS_KEY_ID', 'LITESTREAM_SECRET_ACCESS_KEY']) {
        expect(env[name]?.value, `${container.name} ${name}`).toBeUndefined();
        expect(env[name]?.valueFrom.secretKeyRef.name).toBe(secret.metadata.name);
        expect(Object.keys(secret.stringData)).toContain(env[name]?.valueFrom.secretKeyRef.key);
      }
    }
  });

  it('wire the optional monitoring: the Service selects the pod, the ServiceMonitor the Service, on the metrics port', () => {
    const template = find('Deployment').spec.template;
    const service = find('Service');
    const monitor = find('ServiceMonitor');
    for (const [label, value] of Object.entries(service.spec.selector as Record<string, string>)) expect(template.metadata.labels[label]).toBe(value);
    for (const [label, value] of Object.entries(monitor.spec.selector.matchLabels as Record<string, string>)) expect(service.metadata.labels[label]).toBe(value);
    expect(service.spec.ports).toContainEqual({ name: 'metrics', port: 9464, targetPort: 'metrics' });
    expect(monitor.spec.endpoints).toContainEqual({ port: 'metrics', path: '/metrics', interval: '30s' });
  });

  it.skipIf(skipWithout(['promtool']))('carry in the PrometheusRule exactly the alerts of deploy/prometheus, which promtool accepts', () => {
    const rule = find('PrometheusRule');
    const rules = parse(readFileSync(join(ROOT, 'deploy', 'prometheus', 'threat-mirror-rules.yml'), 'utf8')) as unknown;
    expect(rule.spec).toEqual(rules);
    const file = join(tempDir(), 'rules.yml');
    writeFileSync(file, JSON.stringify(rule.spec));
    const checked = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
    expect(checked.status, `${checked.stdout}${checked.stderr}`).toBe(0);
  });
});
