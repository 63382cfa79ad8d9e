// The daemon as a sidecar runs it: on a schedule, with health, readiness and metrics, stopped by SIGTERM.
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats, type Standin } from '../src/standin/index.js';
import { type CliProcess, runCli, servingPort, startCli } from './support/cli.js';
import { promtoolCheckMetrics, skipWithout } from './support/judges.js';
import { mirroredThreats, runs, scalar, withDb } from './support/mirror-db.js';
import { EVERY_SECOND_DAEMON, mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath } from './support/temp.js';

const KEY = 'acme-daemon-key';
// The daemon's clock starts here and runs on: dates hold whatever the hour the suite runs.
const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);

function startService(count = 500): Promise<Standin> {
  return serveThreats(KEY, NOW, generateThreats({ seed: 41, organizations: ['acme'], count, fromDay: addDays(TODAY, -4), toDay: TODAY }));
}

const daemonEnv = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: '5', ...EVERY_SECOND_DAEMON });

const runsFinished = (process: CliProcess, status: string): number =>
  process.logs.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('sync of organization') && line.status === status).length;

describe('daemon', () => {
  /** What the first test's daemon served on /metrics, for promtool to judge in a test of its own. */
  let servedMetrics = '';

  it('syncs at start and on every tick, picks up new threats, serves health, and stops cleanly on SIGTERM', async () => {
    const service = await startService();
    const dbPath = tempDbPath();
    const daemon = startCli([], daemonEnv(service, dbPath));
    const port = await servingPort(daemon);
    await daemon.waitForLog((line) => line.status === 'succeeded');
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(200);

    service.addThreats([{ id: 9_000_000, content: 'https://between-ticks.example', type: 'URL', blockedAt: `${TODAY}T11:59:00.000Z`, organization: 'acme' }]);
    await daemon.waitForLog((line) => line.status === 'succeeded' && line.inserted === 1);
    expect(mirroredThreats(dbPath, 'acme').map((row) => row.id)).toContain(9_000_000);

    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const samples = parsePrometheus(metrics);
    servedMetrics = metrics;
    const stored = scalar<number>(dbPath, "SELECT count(*) FROM organization_threats WHERE organization = 'acme'");
    expect(samples.get('threat_mirror_threats_total{organization="acme",result="inserted"}')).toBe(stored);
    expect(samples.get('threat_mirror_runs_total{organization="acme",stream="threats",outcome="succeeded"}')).toBeGreaterThanOrEqual(2);
    expect(samples.get('threat_mirror_requests_total{organization="acme",outcome="ok"}')).toBeGreaterThanOrEqual(2);
    expect(samples.get('threat_mirror_last_success_timestamp_seconds{organization="acme"}')).toBeGreaterThan(0);
    expect(mirroredThreats(dbPath, 'acme')).toEqual(expected(service));

    daemon.kill('SIGTERM');
    const exit = await daemon.exited;
    expect(exit.code).toBe(0);
    expect(scalar(dbPath, 'PRAGMA integrity_check')).toBe('ok');
  });

  it.skipIf(skipWithout(['promtool']))('serves /metrics that promtool check metrics accepts', () => {
    expect(servedMetrics).toContain('threat_mirror_runs_total');
    expect(promtoolCheckMetrics(servedMetrics)).toEqual({ ok: true, output: '' });
  });

  it('skips a tick that falls during a run: runs never overlap, and the next tick after it runs', async () => {
    const service = await startService(200);
    service.setLatency(1500);
    const dbPath = tempDbPath();
    const daemon = startCli([], daemonEnv(service, dbPath, { THREAT_MIRROR_HTTP_PORT: '' }));
    await daemon.waitForLog((line) => line.msg === 'scheduled run skipped: the previous run is still in progress');
    await daemon.waitForLog(() => runsFinished(daemon, 'succeeded') >= 2);
    daemon.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
    const done = withDb(dbPath, (db) =>
      db.prepare("SELECT started_at AS startedAt, finished_at AS finishedAt FROM sync_runs WHERE stream = 'threats' AND status = 'succeeded' ORDER BY id").all(),
    ) as Array<{ startedAt: string; finishedAt: string }>;
    // The positive control: the first run outlasted a tick of the every-second schedule.
    expect(Date.parse(done[0]?.finishedAt ?? '') - Date.parse(done[0]?.startedAt ?? '')).toBeGreaterThan(1000);
    for (let index = 1; index < done.length; index += 1) {
      expect(Date.parse(done[index]?.startedAt ?? ''), 'a run started before the one before it ended').toBeGreaterThanOrEqual(Date.parse(done[index - 1]?.finishedAt ?? ''));
    }
  });

  it('on SIGTERM during a slow page leaves an intact file, an interrupted run and no partial page; the next run completes', async () => {
    const service = await startService(800);
    const dbPath = tempDbPath();
    service.faults.enqueue({ kind: 'delay', ms: 60_000 }, { times: 1 });
    const daemon = startCli([], daemonEnv(service, dbPath, { THREAT_MIRROR_HTTP_PORT: '' }));
    await service.waitForRequests(1);
    const stopAsked = Date.now();
    daemon.kill('SIGTERM');
    const exit = await daemon.exited;
    expect(exit.code).toBe(0);
    expect(Date.now() - stopAsked).toBeLessThan(10_000);
    expect(scalar(dbPath, 'PRAGMA integrity_check')).toBe('ok');
    expect(runs(dbPath).map((run) => run.status)).toEqual(['interrupted']);
    expect(scalar(dbPath, 'SELECT count(*) FROM threats')).toBe(scalar(dbPath, 'SELECT coalesce(sum(threats_inserted), 0) FROM sync_runs'));

    const again = await runCli(['--once'], daemonEnv(service, dbPath, { THREAT_MIRROR_HTTP_PORT: '' }));
    expect(again.code).toBe(0);
    expect(runs(dbPath).map((run) => run.status)).toEqual(['interrupted', 'succeeded']);
  });

  it('refuses a second writer on the same file while the first runs', async () => {
    const service = await startService(100);
    const dbPath = tempDbPath();
    const daemon = startCli([], daemonEnv(service, dbPath, { THREAT_MIRROR_HTTP_PORT: '' }));
    await daemon.waitForLog((line) => line.msg === 'daemon started');
    const second = await runCli(['--once'], daemonEnv(service, dbPath, { THREAT_MIRROR_HTTP_PORT: '' }));
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/another threat-mirror process is already writing/);
    daemon.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  });

  it('turns /readyz to 503 while the service fails, and back to 200 once it recovers', async () => {
    const service = await startService(100);
    const dbPath = tempDbPath();
    const daemon = startCli([], daemonEnv(service, dbPath));
    const port = await servingPort(daemon);
    await daemon.waitForLog((line) => line.status === 'succeeded');
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);

    service.faults.setRandom({ kind: 'status', status: 503 }, 1);
    await daemon.waitForLog((line) => line.status === 'failed');
    const failing = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(failing.status).toBe(503);
    expect(((await failing.json()) as { reasons: string[] }).reasons.join(' ')).toMatch(/last run failed/);

    service.faults.clear();
    const succeededBefore = runsFinished(daemon, 'succeeded');
    await daemon.waitForLog(() => runsFinished(daemon , 'succeeded') > succeededBefore);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    daemon.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  });
  it('judges staleness on the longest gap of the schedule over a week of its ticks, not the first gap', async () => {
    const service = await startService(10);
    const staleAfter = async (schedule: string): Promise<number> => {
      const dbPath = tempDbPath();
      const daemon = startCli([], daemonEnv(service, dbPath, { THREAT_MIRROR_SCHEDULE: schedule, THREAT_MIRROR_HTTP_PORT: '' }));
      await daemon.waitForLog((line) => line.msg === 'sync of organization "acme" succeeded');
      daemon.kill('SIGTERM');
      expect((await daemon.exited).code).toBe(0);
      return scalar<number>(dbPath, "SELECT stale_after_seconds FROM sync_status WHERE organization = 'acme'");
    };
    // Weekdays only: the weekend's 72 hours, whatever day the suite runs.
    expect(await staleAfter('0 9 * * 1-5')).toBe(2 * 72 * 3600);
    // Seconds 0 and 1 of one minute every hour, that minute a little ahead of now: the first two
    // ticks are a second apart, the longest gap is the rest of the hour.
    const minute = (new Date().getUTCMinutes() + 2) % 60;
    expect(await staleAfter(`0,1 ${minute} * * * *`)).toBe(2 * 3599);
  });
});

function expected(service: Standin) {
  return service
    .threatsVisibleTo(KEY)
    .filter((threat) => threat.blockedAt.slice(0, 10) >= addDays(TODAY, -4))
    .map(({ id, content, type, blockedAt }) => ({ id, content, type, blockedAt }));
}

/** Parses Prometheus text exposition into sample → value, failing on any malformed line. */
function parsePrometheus(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})?) (-?[0-9.eE+-]+|NaN|\+Inf|-Inf)$/.exec(line);
    if (!match) throw new Error(`not Prometheus text: ${line}`);
    samples.set(match[1] ?? '', Number(match[3]));
  }
  return samples;
}
