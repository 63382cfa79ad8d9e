// One list of what the program exposes (issue 42): the variables (src/config/variables.ts), the
// metrics (the registry src/daemon/metrics.ts builds) and the HTTP endpoints (src/serve/endpoints.ts).
// Every name `--help`, the daemon's startup log, README, docs/ and deploy/ give must be in those
// lists, and every name in them must be given somewhere a reader looks. And the small
// disagreements of issue 42 case 5, each checked.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { POLL_MS } from '../src/allowlist/allowlist-watcher.js';
import { ALLOWLIST, ENVIRONMENT_VARIABLES, VARIABLE_FORMS } from '../src/config/variables.js';
import { WalHealth } from '../src/daemon/wal-health.js';
import { createMetrics } from '../src/daemon/metrics.js';
import { addDays } from '../src/lib/days.js';
import { API_PREFIX, ENDPOINTS, SERVING_LOG_MESSAGE } from '../src/serve/endpoints.js';
import { runCli, servingPort, startCli } from './support/cli.js';
import { exposedSeries } from './support/promql.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath } from './support/temp.js';

const ROOT = join(import.meta.dirname, '..');
const NOW = '2026-03-15T12:00:00.000Z';
const KEY = 'acme-exposed-key';

const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/** README, docs/ and deploy/ (rules, their tests, the dashboard, the manifests), by path. */
function documents(): Map<string, string> {
  const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((name) => `docs/${name}`)];
  for (const folder of readdirSync(join(ROOT, 'deploy'))) files.push(...readdirSync(join(ROOT, 'deploy', folder)).map((name) => `deploy/${folder}/${name}`));
  return new Map(files.map((path) => [path, read(path)]));
}

/** What a reader is told: the documents, --help, and the daemon's log from its start to its first run. */
async function everythingTold(): Promise<Map<string, string>> {
  const told = documents();
  told.set('--help', (await runCli(['--help'], {})).stdout);
  const service = await serveThreats(KEY, NOW, []);
  const daemon = startCli([], mirrorEnvFor(KEY, NOW)(service, tempDbPath(), { THREAT_MIRROR_HTTP_PORT: '0', THREAT_MIRROR_SCHEDULE: '0 0 1 1 *' }));
  await servingPort(daemon);
  await daemon.waitForLog((line) => String(line.msg).startsWith('sync of organization "acme" '));
  told.set('the startup log', daemon.logs.map((line) => JSON.stringify(line)).join('\n'));
  return told;
}

/** Every series the daemon's registry holds: the sync's, the serving thread's, the WAL's, the progress gauge, the process's. */
async function registeredSeries(): Promise<Set<string>> {
  const metrics = createMetrics();
  metrics.observeWal(new WalHealth(tempDbPath(), 1800), () => new Date(NOW));
  metrics.observeProgress(() => []);
  return exposedSeries(await metrics.registry.metrics());
}

/** `name` in `where`, each time, as `where: name`. */
function namesIn(told: Map<string, string>, pattern: RegExp, group = 0): Array<{ where: string; name: string }> {
  return [...told].flatMap(([where, text]) => [...text.matchAll(pattern)].map((match) => ({ where, name: match[group] ?? '' })));
}

const VARIABLE = /\bTHREAT_MIRROR_[A-Z0-9_]*[A-Z0-9]|\bLOG_LEVEL\b/g;
/** A series name; not the tail of a link's anchor (`#local-exceptions-threat_mirror_allowlist`). */
const METRIC = /(?<![-#])\bthreat_mirror_[a-z0-9_]*[a-z0-9]\b/g;
/** A path as the docs write one of ours: a probe (`/readyz`), /metrics, or under /v1/; not part of a host's URL or a file path. */
const ENDPOINT = /(?<![A-Za-z0-9._~/-])(\/(?:[a-z]+z(?![A-Za-z])|metrics|v\d+\/[A-Za-z0-9_*%.{}/-]*))/g;

describe('one list of what the program exposes', { timeout: 120_000 }, () => {
  it('every variable a doc, --help or the log names is in src/config/variables.ts, and every one there is in docs/configuration.md', async () => {
    const told = await everythingTold();
    const known = new Set(ENVIRONMENT_VARIABLES.map((variable) => variable.name));
    const unknown = namesIn(told, VARIABLE).filter(({ name }) => !known.has(name) && !VARIABLE_FORMS.some((form) => form.pattern.test(name)));
    expect(unknown).toEqual([]);
    const configuration = read('docs/configuration.md');
    expect(ENVIRONMENT_VARIABLES.filter((variable) => !configuration.includes(`\`${variable.name}\``)).map((variable) => variable.name)).toEqual([]);
    // The check finds what it looks for.
    expect(namesIn(told, VARIABLE).length).toBeGreaterThan(200);
  });

  it('every metric a doc, a rule, the dashboard or --help names is one the daemon registers, and every one it registers is named in docs/', async () => {
    const told = await everythingTold();
    const registered = await registeredSeries();
    const unknown = namesIn(told, METRIC).filter(({ name }) => !registered.has(name));
    expect(unknown).toEqual([]);
    const docs = [...documents()].filter(([path]) => path.startsWith('docs/')).map(([, text]) => text).join('\n');
    // The process's own metrics (prom-client's defaults) are named as a family: "the process metrics".
    const own = [...registered].filter((name) => !/^threat_mirror_(process|nodejs)_/.test(name) && !/_(bucket|sum|count)$/.test(name));
    expect(own.filter((name) => !new RegExp(`\\b${name}\\b`).test(docs))).toEqual([]);
    expect(own.length).toBeGreaterThan(40);
  });

  it('every endpoint a doc, --help or the log names is in src/serve/endpoints.ts, and every one there is in docs/operations.md, --help and the startup log', async () => {
    const told = await everythingTold();
    const exists = (path: string): boolean =>
      ENDPOINTS.some((endpoint) => endpoint.path === path || (endpoint.route.endsWith('/') && path.startsWith(endpoint.route))) || path === `${API_PREFIX}*` || path === API_PREFIX;
    const named = namesIn(told, ENDPOINT, 1);
    expect(named.filter(({ name }) => !exists(name.replace(/[.]$/, '')))).toEqual([]);
    for (const where of ['docs/operations.md', '--help', 'the startup log']) {
      const text = told.get(where) ?? '';
      expect(ENDPOINTS.filter((endpoint) => !text.includes(endpoint.path)).map((endpoint) => endpoint.path), where).toEqual([]);
    }
    expect(SERVING_LOG_MESSAGE).toBe('serving /healthz, /readyz, /startupz, /metrics, /v1/lookup and /v1/exports/FORMAT');
    expect(named.length).toBeGreaterThan(50);
  });

  it('docs/operations.md lists exactly the alerts of the rules, and no endpoint among them (issue 42 case 5)', () => {
    const rules = (parse(read('deploy/prometheus/threat-mirror-rules.yml')) as { groups: Array<{ rules: Array<{ alert?: string }> }> }).groups.flatMap((group) => group.rules.map((rule) => rule.alert));
    const operations = read('docs/operations.md');
    const alerts = operations.slice(operations.indexOf('## Alerts and the dashboard'), operations.indexOf('\n## ', operations.indexOf('## Alerts and the dashboard') + 1));
    const listed = [...alerts.matchAll(/^\| `(ThreatMirror\w+)` \|/gm)].map((match) => match[1]);
    expect(listed.sort()).toEqual([...rules].sort());
    // The /v1/lookup bullet once sat here, under "Alerts": endpoints are listed with the others.
    expect(alerts.split('\n').filter((line) => /^- `(GET|POST) \//.test(line))).toEqual([]);
    const sidecar = operations.slice(operations.indexOf('## As a sidecar'), operations.indexOf('## Alerts and the dashboard'));
    expect(ENDPOINTS.filter((endpoint) => !sidecar.includes(`\`GET ${endpoint.path}`)).map((endpoint) => endpoint.path)).toEqual([]);
  });
});

describe('the small disagreements (issue 42 case 5)', () => {
  it('--help, docs/configuration.md and docs/lookup.md say the same of how soon the daemon uses a changed allowlist', async () => {
    const help = (await runCli(['--help'], {})).stdout;
    const line = help.split('\n').find((candidate) => candidate.trimStart().startsWith(`${ALLOWLIST.name} `)) ?? '';
    expect(line).toContain(`every ${POLL_MS / 1000} s and uses a change within a second or two`);
    const configuration = read('docs/configuration.md');
    const paragraph = configuration.slice(configuration.indexOf('**`THREAT_MIRROR_ALLOWLIST`**'), configuration.indexOf('\n\n', configuration.indexOf('**`THREAT_MIRROR_ALLOWLIST`**')));
    expect(paragraph.replace(/\s+/g, ' ')).toContain('looks at it every second and uses each change within a second or two');
    expect(read('docs/lookup.md').replace(/\s+/g, ' ')).toContain('the change is in use everywhere within a second or two of the write');
    for (const text of [line, paragraph]) expect(text).not.toMatch(/within 5 s|about a second/);
  });

  it('verify --from today names --from, not a --to nobody gave', async () => {
    const service = await serveThreats(KEY, NOW, []);
    const today = NOW.slice(0, 10);
    const result = await runCli(['verify', '--from', today], mirrorEnvFor(KEY, NOW)(service, tempDbPath()));
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`threat-mirror: --from ${today}: verify checks closed days only, the last is ${addDays(today, -1)} (UTC)\n`);
    const both = await runCli(['verify', '--from', addDays(today, -1), '--to', addDays(today, -2)], mirrorEnvFor(KEY, NOW)(service, tempDbPath()));
    expect(both.stderr).toContain(`--from ${addDays(today, -1)} is after --to ${addDays(today, -2)}`);
  });
});
