// The alerts and the dashboard that ship in deploy/: Prometheus' own tool judges the rules and runs
// their unit tests, and every series they name must be one the daemon serves on /metrics (an alert
// on a misspelled series never fires).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { addDays } from '../src/lib/days.js';
import { generateThreats } from '../src/standin/index.js';
import { servingPort, startCli } from './support/cli.js';
import { skipWithout } from './support/judges.js';
import { exposedSeries, seriesNamesIn } from './support/promql.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath, tempDir } from './support/temp.js';

const ROOT = join(import.meta.dirname, '..');
const RULES = join(ROOT, 'deploy', 'prometheus', 'threat-mirror-rules.yml');
const RULE_TESTS = join(ROOT, 'deploy', 'prometheus', 'threat-mirror-rules.test.yml');
const DASHBOARD = join(ROOT, 'deploy', 'grafana', 'threat-mirror-dashboard.json');

const NOW = '2026-03-15T12:00:00.000Z';
const KEY = 'acme-rules-key';

interface RuleFile {
  groups: Array<{ name: string; rules: Array<{ alert?: string; record?: string; expr: string }> }>;
}

function promtool(...args: string[]): { status: number | null; output: string } {
  const result = spawnSync('promtool', args, { encoding: 'utf8', cwd: join(ROOT, 'deploy', 'prometheus') });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** Every query of the dashboard: its panels' targets and its template variables'. */
function dashboardQueries(): string[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    panels: Array<{ targets?: Array<{ expr: string }> }>;
    templating: { list: Array<{ type: string; query?: { query: string } }> };
  };
  const targets = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
  // label_values(METRIC, LABEL): the series is the first argument.
  const variables = dashboard.templating.list.filter((variable) => variable.type === 'query').map((variable) => /label_values\(\s*([^,)]+)/.exec(variable.query?.query ?? '')?.[1] ?? '');
  return [...targets, ...variables];
}

describe('alert rules and dashboard', () => {
  it('reads series names out of PromQL as Prometheus would, leaving labels, functions, durations and variables out', () => {
    expect(seriesNamesIn('time() - a_seconds > ignoring(organization) group_left() b_seconds')).toEqual(['a_seconds', 'b_seconds']);
    expect(seriesNamesIn('sum by (le, organization) (rate(c_bucket{organization=~"$organization", x="y z"}[$__rate_interval])) offset 5m')).toEqual(['c_bucket']);
    expect(seriesNamesIn('histogram_quantile(0.99, sum by (le) (rate(d_bucket[5m]))) > 1e3 and on(instance) e == bool 2')).toEqual(['d_bucket', 'e']);
  });

  it.skipIf(skipWithout(['promtool']))('pass promtool check rules and their unit tests (promtool test rules)', () => {
    const checked = promtool('check', 'rules', RULES);
    expect(checked.status, checked.output).toBe(0);
    const tested = promtool('test', 'rules', RULE_TESTS);
    expect(tested.status, tested.output).toBe(0);
    expect(tested.output).toContain('SUCCESS');
    // Every alert has a unit test.
    const rules = (parse(readFileSync(RULES, 'utf8')) as RuleFile).groups.flatMap((group) => group.rules);
    const tests = readFileSync(RULE_TESTS, 'utf8');
    for (const rule of rules) expect(tests, `${rule.alert} has no test`).toContain(`alertname: ${rule.alert}`);
  });

  it('see a sidecar that never synced from the first scrape of each start: ever synced 0, last success 0, failed runs counted from the file (issue 42 case 2)', async () => {
    const service = await serveThreats(KEY, NOW, []);
    const dbPath = tempDbPath();
    const wrongKey = mirrorEnvFor('a-wrong-key-0000', NOW)(service, dbPath, { THREAT_MIRROR_HTTP_PORT: '0', THREAT_MIRROR_SCHEDULE: '0 0 1 1 *', THREAT_MIRROR_MAX_RETRIES: '0' });
    const gauge = (metrics: string, series: string): number | undefined => {
      const line = metrics.split('\n').find((candidate) => candidate.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
    const acme = '{organization="acme"}';
    const failed = '{organization="acme",stream="threats"}';
    const firstRuns: Array<number | undefined> = [];
    // Three lives of the sidecar, as a startup probe that restarts it gives it: each reads the file.
    for (let life = 0; life < 3; life += 1) {
      const daemon = startCli([], wrongKey);
      const port = await servingPort(daemon);
      const first = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect({ life, ever: gauge(first, `threat_mirror_ever_synced${acme}`), last: gauge(first, `threat_mirror_last_success_timestamp_seconds${acme}`) }).toEqual({ life, ever: 0, last: 0 });
      // Before this life's run has ended, or after: what the file holds, never less.
      expect(gauge(first, `threat_mirror_consecutive_failed_runs${failed}`)).toBeGreaterThanOrEqual(life);
      await daemon.waitForLog((line) => String(line.msg).startsWith('sync of organization "acme" failed: '));
      const after = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(gauge(after, `threat_mirror_consecutive_failed_runs${failed}`)).toBe(life + 1);
      firstRuns.push(gauge(after, `threat_mirror_first_run_timestamp_seconds${acme}`));
      await daemon.stop('SIGTERM');
    }
    // The first run's time is the file's: restarts do not start the clock again (the first life,
    // before its run, shows its own start, a moment earlier).
    const [own, ...fromFile] = firstRuns as number[];
    expect(new Set(fromFile).size).toBe(1);
    expect((fromFile[0] as number) - (own as number)).toBeGreaterThanOrEqual(0);
    expect((fromFile[0] as number) - (own as number)).toBeLessThan(5);
  });

  it('name only series the daemon exposes on /metrics', async () => {
    const service = await serveThreats(KEY, NOW, generateThreats({ seed: 91, organizations: ['acme'], count: 300, fromDay: addDays(NOW.slice(0, 10), -4), toDay: NOW.slice(0, 10) }));
    const exports = tempDir();
    const allowlist = join(exports, 'allow.txt');
    writeFileSync(allowlist, '# no exception yet\n');
    const daemon = startCli(
      [],
      mirrorEnvFor(KEY, NOW)(service, tempDbPath(), {
        THREAT_MIRROR_INITIAL_DAYS: '5',
        THREAT_MIRROR_HTTP_PORT: '0',
        THREAT_MIRROR_SCHEDULE: '0 0 1 1 *',
        THREAT_MIRROR_EXPORTS: `hosts=${join(exports, 'hosts.txt')}`,
        THREAT_MIRROR_ALLOWLIST: allowlist,
      }),
    );
    const port = await servingPort(daemon);
    await daemon.waitForLog((line) => line.msg === 'sync of organization "acme" succeeded');
    // A lookup, so that its counter has a sample; the HTTP thread reports it within a second.
    expect((await fetch(`http://127.0.0.1:${port}/v1/lookup?value=example.com`)).status).toBe(200);
    let metrics = '';
    for (let attempt = 0; attempt < 100 && !/^threat_mirror_lookup_requests_total\{code="200"\} 1$/m.test(metrics); attempt += 1) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    }
    expect(metrics).toMatch(/^threat_mirror_lookup_requests_total\{code="200"\} 1$/m);
    expect(metrics).toMatch(/^threat_mirror_lookup_duration_seconds_count 1$/m);
    const exposed = exposedSeries(metrics);
    const rules = (parse(readFileSync(RULES, 'utf8')) as RuleFile).groups.flatMap((group) => group.rules);
    const named = new Map<string, string[]>();
    for (const rule of rules) named.set(`rule ${rule.alert ?? rule.record}`, seriesNamesIn(rule.expr));
    dashboardQueries().forEach((query, index) => named.set(`dashboard query ${index + 1}: ${query}`, seriesNamesIn(query)));
    const missing = [...named].flatMap(([where, names]) => names.filter((name) => !exposed.has(name)).map((name) => `${where} names ${name}`));
    expect(missing).toEqual([]);
    // Each rule and each query names at least one series (an extraction that found none would pass anything).
    for (const [where, names] of named) expect(names.length, where).toBeGreaterThan(0);
    expect(named.size).toBeGreaterThan(20);
  });
});
