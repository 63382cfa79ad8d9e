// The history a mirror holds (issue 41): THREAT_MIRROR_HISTORY_FROM reached by the daemon (and
// --once) by itself after its incremental runs, newest first, within its budget per run; extended
// when the setting moves earlier (or THREAT_MIRROR_INITIAL_DAYS grows), kept when it moves later;
// sync_status.history_from, `status` and `lookup` saying which days the mirror holds.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats, type RequestRecord, type Standin, type StandinThreat } from '../src/standin/index.js';
import { type CliProcess, runCli, servingPort, startCli } from './support/cli.js';
import { runs, withDb } from './support/mirror-db.js';
import { until } from './support/until.js';
import { EVERY_SECOND_DAEMON, mirrorEnvFor, serveThreats, startTestStandin } from './support/service.js';
import { tempDbPath } from './support/temp.js';
import { openWritableMirrorSync } from './support/writable-mirror.js';
import { openDatabaseReadOnly } from '../src/db/open-database.js';
import { SyncHealthReads } from '../src/db/read/sync-health.js';
import { currentThreats, daysBack, listed, overdueDays } from './support/walk-data.js';

const KEY = 'acme-history-key';
const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const YESTERDAY = addDays(TODAY, -1);
/** The first day of the default 30 days a first run mirrors. */
const FIRST_RUN_FROM = addDays(TODAY, -29);

const env = mirrorEnvFor(KEY, NOW);

/** `days` days of threats ending today, `perDay` a day on average. */
function serveDays(days: number, perDay = 50): Promise<Standin> {
  return serveThreats(KEY, NOW, generateThreats({ seed: 4141, organizations: ['acme'], count: perDay * days, fromDay: addDays(TODAY, -(days - 1)), toDay: TODAY }));
}

interface History {
  completeThrough: string | null;
  historyFrom: string | null;
  historyTarget: string | null;
}

function history(dbPath: string): History {
  return withDb(dbPath, (db) =>
    db.prepare("SELECT complete_through AS completeThrough, history_from AS historyFrom, history_target AS historyTarget FROM sync_status WHERE organization = 'acme'").get() as History,
  );
}

/** What the service lists of days [from, to], as the mirror should hold them. */
function listedBetween(service: Standin, from: string, to: string): ReturnType<typeof listed> {
  return listed(service, KEY).filter((threat) => threat.blockedAt.slice(0, 10) >= from && threat.blockedAt.slice(0, 10) <= to);
}

function heldBetween(dbPath: string, from: string, to: string): ReturnType<typeof currentThreats> {
  return currentThreats(dbPath).filter((threat) => threat.blockedAt.slice(0, 10) >= from && threat.blockedAt.slice(0, 10) <= to);
}

/** Requests of a walk of days before `before` (the history's; the incremental range and its re-scan are later). */
function requestsBefore(requests: readonly RequestRecord[], before: string): number {
  return requests.filter((request) => {
    const body = request.body as { endDate?: string; query?: string };
    return body.query === undefined && body.endDate !== undefined && body.endDate < before;
  }).length;
}

/** The daemon's threat_mirror_history_missing for acme; undefined before its first history check. */
async function missingDays(port: number): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const match = /^threat_mirror_history_missing\{organization="acme"\} (\d+)$/m.exec(text);
  return match ? Number(match[1]) : undefined;
}

const historyRuns = (dbPath: string): Array<Record<string, unknown>> => runs(dbPath).filter((run) => run.mode === 'history');

describe('the history a mirror holds', { timeout: 120_000 }, () => {
  it('the daemon reaches THREAT_MIRROR_HISTORY_FROM 60 days back by itself, within the runs its budget implies, history_from right at each step', async () => {
    const service = await serveDays(60, 200);
    const dbPath = tempDbPath();
    const target = addDays(TODAY, -59);
    const budget = 20;
    const daemon: CliProcess = startCli([], env(service, dbPath, { ...EVERY_SECOND_DAEMON, THREAT_MIRROR_HISTORY_FROM: target, THREAT_MIRROR_HISTORY_MAX_REQUESTS: String(budget) }));
    const port = await servingPort(daemon);
    const seen: string[] = [];
    // threat_mirror_history_missing as scraped at each step (set just after the step's log line: it may lag a run).
    const missing: number[] = [];
    const oldest = service.threatsVisibleTo(KEY).find((threat) => threat.blockedAt.startsWith(target)) as StandinThreat;
    const verdicts: string[] = [];
    let finished = 0;
    for (;;) {
      finished += 1;
      await daemon.waitForLog(() => daemon.logs.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('history walk of organization')).length >= finished);
      const scraped = await missingDays(port);
      if (scraped !== undefined) missing.push(scraped);
      const step = history(dbPath);
      // Each step: every day from history_from through complete_through holds what the service lists.
      expect(step.historyTarget).toBe(target);
      expect(step.completeThrough).toBe(YESTERDAY);
      expect(step.historyFrom).not.toBeNull();
      const from = step.historyFrom as string;
      expect(heldBetween(dbPath, from, YESTERDAY)).toEqual(listedBetween(service, from, YESTERDAY));
      if (seen.length > 0) expect(from <= (seen.at(-1) as string)).toBe(true);
      seen.push(from);
      // /v1/lookup judges as `lookup` does: a threat of the start's day is "unknown" until the walk holds it.
      const answer = (await (await fetch(`http://127.0.0.1:${port}/v1/lookup?value=${encodeURIComponent(oldest.content)}`)).json()) as { results: Array<{ verdict: string }>; mirror: { history_from: string } };
      verdicts.push(`${answer.mirror.history_from} ${answer.results[0]?.verdict}`);
      expect(answer.results[0]?.verdict).toBe(answer.mirror.history_from > target ? 'unknown' : 'blocked');
      if (from === target) break;
      expect(finished).toBeLessThan(20);
    }
    expect([verdicts[0]?.endsWith(' unknown'), verdicts.at(-1)], verdicts.join(', ')).toEqual([true, `${target} blocked`]);
    // The gauge an alert watches (deploy/prometheus): days missing, falling run by run to none.
    await until('threat_mirror_history_missing 0', async () => (await missingDays(port)) === 0, 20_000, () => daemon.stdout);
    expect(missing.length).toBeGreaterThan(0);
    expect(missing.some((days) => days > 0 && days <= 30)).toBe(true);
    expect(missing).toEqual([...missing].sort((a, b) => b - a));
    await daemon.stop('SIGTERM');
    // The first run mirrored the default 30 days; the history walk the 30 before, newest first
    // (the first window begun ends the day before), in windows that cover them once each.
    const begun = service.stats.requests.map((request) => request.body as { startDate: string; endDate: string; next_page?: string; sorting: Array<{ key: string }> });
    const windows = begun.filter((body) => body.endDate < FIRST_RUN_FROM && body.next_page === undefined && body.sorting[0]?.key === 'id');
    expect(windows[0]?.endDate).toBe(addDays(FIRST_RUN_FROM, -1));
    // A resumed window's check re-reads its first page: one window, asked for twice.
    const byEnd = [...new Map(windows.map((window) => [window.startDate, window])).values()].sort((a, b) => (a.endDate < b.endDate ? 1 : -1));
    for (let index = 1; index < byEnd.length; index += 1) expect(byEnd[index]?.endDate).toBe(addDays(byEnd[index - 1]?.startDate as string, -1));
    expect(byEnd.at(-1)?.startDate).toBe(target);
    expect(currentThreats(dbPath)).toEqual(listed(service, KEY));
    // Within its budget: every history run but the last spent the whole of it, none more.
    const spent = requestsBefore(service.stats.requests, FIRST_RUN_FROM);
    const walks = historyRuns(dbPath);
    expect(walks.length).toBeGreaterThanOrEqual(seen.length);
    expect(walks.length).toBe(Math.ceil(spent / budget));
    // The older 30 days hold about 6,000 threats: 60 full pages, a partial one per window, a check per resumed window.
    const older = listedBetween(service, target, addDays(FIRST_RUN_FROM, -1)).length;
    expect(spent).toBeLessThanOrEqual(Math.ceil(older / 100) + 2 * walks.length + 2);
    // The days it walked are fresh for the reconciliation: nothing is overdue, nothing re-walked.
    expect(overdueDays(dbPath)).toBe(0);
    expect(runs(dbPath).filter((run) => run.mode === 'reconcile')).toEqual([]);
  });

  it('--once runs extend the history when the setting moves earlier or INITIAL_DAYS grows, keep it when it moves later, and status and lookup say which days it holds', async () => {
    const service = await serveDays(90);
    const dbPath = tempDbPath();
    const once = async (extra: Record<string, string>): Promise<void> => {
      const result = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_HISTORY_MAX_REQUESTS: '8', ...extra }));
      expect(result.code, result.stderr).toBe(0);
    };

    // As before this setting: the last 30 days, nothing older, and no request for older days.
    await once({});
    expect(history(dbPath)).toEqual({ completeThrough: YESTERDAY, historyFrom: FIRST_RUN_FROM, historyTarget: FIRST_RUN_FROM });
    expect(requestsBefore(service.stats.requests, FIRST_RUN_FROM)).toBe(0);
    const lookup = await runCli(['lookup', 'innocent.example'], env(service, dbPath));
    // Judged on the writer's clock (THREAT_MIRROR_NOW): synced and fresh, so a miss is "not blocked".
    expect(lookup.code).toBe(1);
    expect(lookup.stdout).toContain(`(mirror holds ${FIRST_RUN_FROM} through ${YESTERDAY})`);

    // The walk off: the runs still record this configuration's start (a restored pod kept its
    // primary's), no request goes to older days, and status never calls the history whole.
    const sixty = addDays(TODAY, -59);
    await once({ THREAT_MIRROR_HISTORY_FROM: sixty, THREAT_MIRROR_HISTORY_MAX_REQUESTS: '0' });
    expect(history(dbPath)).toEqual({ completeThrough: YESTERDAY, historyFrom: FIRST_RUN_FROM, historyTarget: sixty });
    expect(requestsBefore(service.stats.requests, FIRST_RUN_FROM)).toBe(0);
    const off = await runCli(['status'], { THREAT_MIRROR_DB: dbPath });
    expect(off.stdout).toContain(`  history           the configured start is ${sixty}; no walk toward it (THREAT_MIRROR_HISTORY_MAX_REQUESTS=0)\n`);
    // Nothing will walk the older days: a miss covers the days held, and says which.
    const offLookup = await runCli(['lookup', 'innocent.example'], env(service, dbPath));
    expect([offLookup.code, offLookup.stdout]).toEqual([1, expect.stringContaining(`(mirror holds ${FIRST_RUN_FROM} through ${YESTERDAY})`)]);

    // Raising THREAT_MIRROR_INITIAL_DAYS later is no longer ignored: the walk reaches 45 days back.
    const fortyFive = addDays(TODAY, -44);
    await once({ THREAT_MIRROR_INITIAL_DAYS: '45' });
    const first = history(dbPath);
    expect(first.historyTarget).toBe(fortyFive);
    expect((first.historyFrom as string) < FIRST_RUN_FROM).toBe(true);
    for (let run = 0; history(dbPath).historyFrom !== fortyFive; run += 1) {
      expect(run).toBeLessThan(10);
      await once({ THREAT_MIRROR_INITIAL_DAYS: '45' });
    }
    expect(heldBetween(dbPath, fortyFive, YESTERDAY)).toEqual(listedBetween(service, fortyFive, YESTERDAY));

    // THREAT_MIRROR_HISTORY_FROM earlier: status shows the walk under way, then the mirror holds all 90 days.
    const target = addDays(TODAY, -89);
    await once({ THREAT_MIRROR_HISTORY_FROM: target });
    const walking = await runCli(['status'], { THREAT_MIRROR_DB: dbPath });
    const from = history(dbPath).historyFrom as string;
    expect(walking.stdout).toContain(`  holds             ${from} through ${YESTERDAY}\n`);
    expect(walking.stdout).toMatch(new RegExp(`  history           walking back to ${target}: \\d+/45 days, (ETA \\d\\S*|no pace yet) \\(a lookup miss is unknown until then\\)\n`));
    // A lookup's history_from (read for one organization, db/read/sync-health.ts) is sync_status's.
    const midWalk = await runCli(['lookup', '--json', 'innocent.example'], env(service, dbPath));
    const answer = JSON.parse(midWalk.stdout) as { results: Array<{ verdict: string; reason: string }>; mirror: { history_from: string; organizations: Array<{ history_from: string }> } };
    expect([answer.mirror.history_from, answer.mirror.organizations[0]?.history_from]).toEqual([from, from]);
    // Fails closed while the walk is under way: older days may hold a threat the mirror lacks yet.
    expect(midWalk.code).toBe(3);
    expect(answer.results[0]?.verdict).toBe('unknown');
    expect(answer.results[0]?.reason).toContain(`organization "acme" holds ${from} through ${YESTERDAY}, and its history walk toward its configured start ${target} is under way`);
    const olderThreat = service.threatsVisibleTo(KEY).find((threat) => threat.blockedAt < from) as StandinThreat;
    const older = await runCli(['lookup', olderThreat.content], env(service, dbPath));
    expect([older.code, older.stdout]).toEqual([3, expect.stringContaining(`${olderThreat.content}: cannot vouch: `)]);
    for (let run = 0; history(dbPath).historyFrom !== target; run += 1) {
      expect(run).toBeLessThan(15);
      await once({ THREAT_MIRROR_HISTORY_FROM: target });
    }
    expect(currentThreats(dbPath)).toEqual(listed(service, KEY));
    const whole = await runCli(['status', '--json'], { THREAT_MIRROR_DB: dbPath });
    const organization = (JSON.parse(whole.stdout) as { organizations: Array<{ history: Record<string, unknown> }> }).organizations[0];
    expect(organization?.history).toMatchObject({ heldFrom: target, heldThrough: YESTERDAY, target, daysDone: null });

    // Later: what is mirrored stays, and no request goes to older days.
    const before = service.stats.requests.length;
    await once({ THREAT_MIRROR_HISTORY_FROM: addDays(TODAY, -9) });
    expect(requestsBefore(service.stats.requests.slice(before), addDays(TODAY, -9))).toBe(0);
    expect(history(dbPath)).toEqual({ completeThrough: YESTERDAY, historyFrom: target, historyTarget: addDays(TODAY, -9) });
    expect(currentThreats(dbPath)).toEqual(listed(service, KEY));
    const holds = await runCli(['lookup', 'innocent.example'], env(service, dbPath));
    expect(holds.stdout).toContain(`(mirror holds ${target} through ${YESTERDAY})`);
  });

  it.each([
    { budget: 2, dense: [350, 350] },
    { budget: 5, dense: [1_200] },
  ])('with THREAT_MIRROR_HISTORY_MAX_REQUESTS=$budget, every run walks further into days of $dense threats, no page is thrown away, and the walk reaches its start', async ({ budget, dense }) => {
    // 12 days before the default 10: the newest hold `dense` threats each, the others 25 each.
    const firstRun = addDays(TODAY, -9);
    const target = addDays(TODAY, -21);
    const threats = daysBack(TODAY, 21, (back) => dense[back - 10] ?? 25, { firstId: 10_000, host: 'dense' });
    const service = await serveThreats(KEY, NOW, threats);
    const dbPath = tempDbPath();
    const settings = { THREAT_MIRROR_INITIAL_DAYS: '10', THREAT_MIRROR_HISTORY_FROM: target, THREAT_MIRROR_HISTORY_MAX_REQUESTS: String(budget) };
    const pagesOf = (runId: unknown): number => withDb(dbPath, (db) => db.prepare('SELECT pages FROM sync_runs WHERE id = ?').pluck().get(runId) as number);
    let runs = 0;
    do {
      const before = service.stats.requests.length;
      const result = await runCli(['--once'], env(service, dbPath, settings));
      expect(result.code, result.stderr).toBe(0);
      runs += 1;
      // Every run that walked the history committed pages of it: none spent its budget on checks alone.
      const walk = historyRuns(dbPath).at(-1);
      if (runs > 1) expect(pagesOf(walk?.id), `run ${runs}`).toBeGreaterThanOrEqual(1);
      expect(requestsBefore(service.stats.requests.slice(before), firstRun)).toBeLessThanOrEqual(budget);
      // Before the fix: with 2 requests, every run from the second on checked two windows and walked none.
      expect(runs, `history_from ${history(dbPath).historyFrom}`).toBeLessThanOrEqual(budget === 2 ? 20 : 10);
    } while (history(dbPath).historyFrom !== target);
    console.log(`history walk with ${budget} requests a run: ${runs} runs`);
    expect(currentThreats(dbPath)).toEqual(listed(service, KEY));
    // A page is asked for again only to check a stored cursor: no page is asked for three times, as
    // one fetched and then thrown away at each run's end would be.
    const times = new Map<string, number>();
    for (const request of service.stats.requests) {
      const body = request.body as { endDate: string };
      if (body.endDate < firstRun) times.set(JSON.stringify(body), (times.get(JSON.stringify(body)) ?? 0) + 1);
    }
    expect([...times].filter(([, count]) => count > 2)).toEqual([]);
  });

  it("a resumed window's check is paid together with the page after it: a slow check leaves the budget to no other window, and no page is asked for a third time", async () => {
    // The budget-5 case above, made certain: the day of 1,200 threats is left at its fifth page by
    // the first run; in the second, the check of its stored cursor (its fourth page again) is slow,
    // and the other worker's windows took the rest of the budget before the page after the check
    // went out. The check was thrown away, the third run checked again: a page asked for three
    // times (CI, 2026-12-07, 1 run in 6 here without the delay).
    const firstRun = addDays(TODAY, -9);
    const target = addDays(TODAY, -21);
    const dense = addDays(TODAY, -10);
    const threats = daysBack(TODAY, 21, (back) => (back === 10 ? 1_200 : 25), { firstId: 20_000, host: 'checked' });
    const service = await serveThreats(KEY, NOW, threats);
    const dbPath = tempDbPath();
    const settings = { THREAT_MIRROR_INITIAL_DAYS: '10', THREAT_MIRROR_HISTORY_FROM: target, THREAT_MIRROR_HISTORY_MAX_REQUESTS: '5' };
    const denseRequests = (from: number): Array<string | undefined> =>
      service.stats.requests
        .slice(from)
        .map((request) => request.body as { startDate: string; endDate: string; next_page?: string })
        .filter((body) => body.startDate === dense && body.endDate === dense)
        .map((body) => body.next_page);
    expect((await runCli(['--once'], env(service, dbPath, settings))).code).toBe(0);
    const left = denseRequests(0).at(-1);
    expect(left, 'the first run stops within the dense day').toBeDefined();
    const stored = String(Number(left) + 1);
    service.onListRequest({ match: { startDate: dense, endDate: dense, page: left }, fault: { kind: 'delay', ms: 400 } });
    const before = service.stats.requests.length;
    const second = await runCli(['--once'], env(service, dbPath, settings));
    expect(second.code, second.stderr).toBe(0);
    expect(requestsBefore(service.stats.requests.slice(before), firstRun)).toBeLessThanOrEqual(5);
    // The check, then the page it vouches for.
    expect(denseRequests(before)).toEqual([left, stored]);
    for (let runs = 3; history(dbPath).historyFrom !== target; runs += 1) {
      expect(runs, `history_from ${history(dbPath).historyFrom}`).toBeLessThanOrEqual(12);
      expect((await runCli(['--once'], env(service, dbPath, settings))).code).toBe(0);
    }
    expect(currentThreats(dbPath)).toEqual(listed(service, KEY));
    const asked = denseRequests(0);
    const times = (page: string | undefined): number => asked.filter((other) => other === page).length;
    expect(times(left)).toBe(2);
    expect(asked.filter((page) => times(page) > 2), 'pages of the dense day asked for a third time').toEqual([]);
  });

  it('a --backfill over days an unfinished history walk has left: the next run walks only the days still missing', async () => {
    const service = await serveDays(60, 100);
    const dbPath = tempDbPath();
    const target = addDays(TODAY, -59);
    const settings = { THREAT_MIRROR_INITIAL_DAYS: '10', THREAT_MIRROR_HISTORY_FROM: target };
    // A walk cut short by its budget: its plan stays open, the newest days before the first 10 next.
    const first = await runCli(['--once'], env(service, dbPath, { ...settings, THREAT_MIRROR_HISTORY_MAX_REQUESTS: '4' }));
    expect(first.code, first.stderr).toBe(0);
    expect(history(dbPath).historyFrom).not.toBe(target);
    // The daemon stopped for a backfill of days 40 back through yesterday: the open plan's next days among them.
    const backfillFrom = addDays(TODAY, -40);
    const backfill = await runCli(['--backfill', '--from', backfillFrom, '--to', YESTERDAY], env(service, dbPath, settings));
    expect(backfill.code, backfill.stderr).toBe(0);
    const before = service.stats.requests.length;
    const next = await runCli(['--once'], env(service, dbPath, settings));
    expect(next.code, next.stderr).toBe(0);
    // Only the days before the backfill's were asked for (before: every day the plan had left, again).
    const asked = service.stats.requests.slice(before).map((request) => request.body as { startDate: string; endDate: string });
    const older = asked.filter((body) => body.endDate < addDays(TODAY, -9));
    expect(older.length).toBeGreaterThan(0);
    expect(older.filter((body) => body.endDate >= backfillFrom)).toEqual([]);
    expect(history(dbPath).historyFrom).toBe(target);
    expect(currentThreats(dbPath)).toEqual(listed(service, KEY));
  });

  it.each([
    ['THREAT_MIRROR_HISTORY_MAX_REQUESTS', '1', 'must be 0 (no history walk) or at least 2'],
    // A year typed wrong: the mirror would have held today alone, "synced and fresh".
    ['THREAT_MIRROR_HISTORY_FROM', addDays(TODAY, 365), `is after today (${TODAY}, UTC)`],
  ])('refuses %s=%s with exit 2 naming it, before a request or the file', async (name, value, says) => {
    const service = await serveDays(3);
    const dbPath = tempDbPath();
    const result = await runCli(['--once'], env(service, dbPath, { [name]: value }));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${name}: "${value}" ${says}`);
    expect(service.stats.requests).toEqual([]);
    expect(existsSync(dbPath)).toBe(false);
  });

  it("a reader's history_from (a lookup's, read once per change of the file) follows every commit of the writer, and equals sync_status's", () => {
    const dbPath = tempDbPath();
    const writer = openWritableMirrorSync(dbPath);
    const reader = openDatabaseReadOnly(dbPath);
    try {
      const reads = new SyncHealthReads(reader.sqlite);
      const viewSays = (): unknown => reader.sqlite.prepare("SELECT history_from FROM sync_status WHERE organization = 'acme'").pluck().get();
      const walked = (day: string): void => {
        writer.sqlite.prepare("INSERT INTO sync_windows (organization, day, completed_at, run_id) VALUES ('acme', ?, '2026-03-15T00:00:00Z', 1)").run(day);
      };
      writer.sqlite.prepare("INSERT INTO sync_checkpoints VALUES ('acme', ?, '2026-03-15T00:00:00Z')").run(YESTERDAY);
      expect(reads.record('acme').historyFrom).toBeNull();
      for (let back = 1; back <= 5; back += 1) walked(addDays(TODAY, -back));
      expect([reads.record('acme').historyFrom, viewSays()]).toEqual([addDays(TODAY, -5), addDays(TODAY, -5)]);
      // A gap: the history held whole starts after it; then the gap walked.
      walked(addDays(TODAY, -7));
      writer.sqlite.prepare("DELETE FROM sync_windows WHERE organization = 'acme' AND day = ?").run(addDays(TODAY, -3));
      expect([reads.record('acme').historyFrom, viewSays()]).toEqual([addDays(TODAY, -2), addDays(TODAY, -2)]);
      walked(addDays(TODAY, -3));
      walked(addDays(TODAY, -6));
      expect([reads.record('acme').historyFrom, viewSays()]).toEqual([addDays(TODAY, -7), addDays(TODAY, -7)]);
    } finally {
      reader.close();
      writer.close();
    }
  });

  it('walks each organization its own history, a scoped one within its asset types: a second organization and a scope beside the walk', async () => {
    const threats = generateThreats({ seed: 4242, organizations: ['acme', 'globex'], count: 4000, fromDay: addDays(TODAY, -39), toDay: TODAY });
    const keys = { acme: 'acme-history-key', globex: 'globex-history-key' };
    const service = await startTestStandin({ threats, keys: { organizationKeys: { [keys.acme]: 'acme', [keys.globex]: 'globex' }, userKeys: {} }, now: () => new Date(NOW) });
    const dbPath = tempDbPath();
    const both = mirrorEnvFor(keys, NOW, { THREAT_MIRROR_ASSET_TYPES_ACME: 'URL', THREAT_MIRROR_INITIAL_DAYS: '10', THREAT_MIRROR_HISTORY_FROM: addDays(TODAY, -39), THREAT_MIRROR_HISTORY_MAX_REQUESTS: '6' });
    const held = (organization: string): string | null =>
      withDb(dbPath, (db) => db.prepare('SELECT history_from FROM sync_status WHERE organization = ?').pluck().get(organization) as string | null);
    let runs = 0;
    do {
      const result = await runCli(['--once'], both(service, dbPath));
      expect(result.code, result.stderr).toBe(0);
      runs += 1;
      expect(runs).toBeLessThan(30);
    } while (held('acme') !== addDays(TODAY, -39) || held('globex') !== addDays(TODAY, -39));
    // More than one run: the budget made the walk span several, each resuming the last.
    expect(runs).toBeGreaterThan(2);
    const current = (organization: string): number[] =>
      withDb(dbPath, (db) => db.prepare('SELECT id FROM current_threats WHERE organization = ? ORDER BY id').pluck().all(organization) as number[]);
    const listedIds = (key: string, types?: readonly string[]): number[] =>
      listed(service, key)
        .filter((threat) => types === undefined || types.includes(threat.type))
        .map((threat) => threat.id)
        .sort((a, b) => a - b);
    expect(current('acme')).toEqual(listedIds(keys.acme, ['URL']));
    expect(current('globex')).toEqual(listedIds(keys.globex));
    expect(current('acme').length).toBeGreaterThan(100);
    // Every request of acme's walk asked for its scope only.
    const acmeBodies = service.stats.requests.filter((request) => request.key === keys.acme && request.path === '/threats/list').map((request) => request.body as { assetType?: unknown });
    expect(acmeBodies.length).toBeGreaterThan(10);
    expect(acmeBodies.every((body) => JSON.stringify(body.assetType) === JSON.stringify(['URL']))).toBe(true);
  });
});
