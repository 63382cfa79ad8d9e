// Windows, request budgets and rate limits, seen from the stand-in's side of the wire.
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats, type Standin, type StandinThreat } from '../src/standin/index.js';
import { runCli } from './support/cli.js';
import { mirroredThreats, withDb } from './support/mirror-db.js';
import { mirrorEnvFor, startTestStandin } from './support/service.js';
import { tempDbPath } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const SHARED_KEY = 'shared-user-key';

function start(threats: StandinThreat[], keys: Record<string, string[]> = { [SHARED_KEY]: ['acme', 'globex'] }): Promise<Standin> {
  return startTestStandin({
    threats,
    keys: {
      organizationKeys: { 'acme-key': 'acme', 'globex-key': 'globex' },
      userKeys: Object.fromEntries(Object.entries(keys).map(([key, organizations]) => [key, organizations.map((organization) => ({ organization, active: true }))])),
    },
    now: () => new Date(NOW),
  });
}

// A refused request is retried within milliseconds.
const RETRIES = { THREAT_MIRROR_RETRY_MIN_MS: '5', THREAT_MIRROR_RETRY_MAX_MS: '50' };

/** Threats on every day boundary: the first and last millisecond of each day. */
function edgeThreats(days: number): StandinThreat[] {
  const threats: StandinThreat[] = [];
  let id = 1;
  for (let offset = days - 1; offset >= 0; offset -= 1) {
    const day = addDays(TODAY, -offset);
    for (const time of ['00:00:00.000', '00:00:00.001', '12:00:00.000', '23:59:59.999']) {
      threats.push({ id: id++, content: `https://edge-${day}-${time}.example`, type: 'URL', blockedAt: `${day}T${time}Z`, organization: 'acme' });
    }
  }
  return threats;
}

describe('windows', () => {
  it('cover every day of a long range exactly: no gaps or doubles at window edges, both ends inclusive', async () => {
    const service = await start([...edgeThreats(90), ...generateThreats({ seed: 3, organizations: ['acme'], count: 3000, fromDay: addDays(TODAY, -89), toDay: TODAY, firstId: 10_000 })]);
    const dbPath = tempDbPath();
    const from = addDays(TODAY, -80);
    const to = addDays(TODAY, -10);
    const result = await runCli(['--backfill', '--from', from, '--to', to], mirrorEnvFor('acme-key', NOW, RETRIES)(service, dbPath));
    expect(result.code).toBe(0);
    const want = service.threatsVisibleTo('acme-key').filter((threat) => threat.blockedAt.slice(0, 10) >= from && threat.blockedAt.slice(0, 10) <= to);
    expect(mirroredThreats(dbPath, 'acme')).toEqual(want.map(({ id, content, type, blockedAt }) => ({ id, content, type, blockedAt })));
    // Several windows were walked, and together they cover the range once: sorted, each starts the
    // day after the one before it ends (a gap or a double would break the chain).
    // A planner's probe (sorted by blockedAt) is no window.
    const walked = service.stats.requests.filter((request) => (request.body as { sorting: Array<{ key: string }> }).sorting[0]?.key === 'id');
    const windows = [...new Set(walked.map((request) => JSON.stringify([(request.body as { startDate: string }).startDate, (request.body as { endDate: string }).endDate])))]
      .map((text) => JSON.parse(text) as [string, string])
      .sort(([a], [b]) => a.localeCompare(b));
    expect(windows.length).toBeGreaterThan(3);
    expect(windows[0]?.[0]).toBe(from);
    expect(windows.at(-1)?.[1]).toBe(to);
    for (let index = 1; index < windows.length; index += 1) expect(windows[index]?.[0], JSON.stringify(windows)).toBe(addDays(windows[index - 1]?.[1] ?? '', 1));
    const days = withDb(dbPath, (db) => db.prepare("SELECT day FROM sync_windows WHERE organization = 'acme' ORDER BY day").pluck().all() as string[]);
    expect(days).toHaveLength(71);
    expect(days[0]).toBe(from);
    expect(days.at(-1)).toBe(to);
  });
});

describe('request budget', () => {
  it('keeps requests in flight per key within THREAT_MIRROR_CONCURRENCY, shared by organizations that share a key', async () => {
    const service = await start(generateThreats({ seed: 5, organizations: ['acme', 'globex'], count: 4000, fromDay: addDays(TODAY, -59), toDay: TODAY }));
    service.setLatency(15);
    const dbPath = tempDbPath();
    const result = await runCli(
      ['--backfill', '--from', addDays(TODAY, -59)],
      mirrorEnvFor({ acme: SHARED_KEY, globex: SHARED_KEY }, NOW, RETRIES)(service, dbPath, { THREAT_MIRROR_CONCURRENCY: '3' }),
    );
    expect(result.code).toBe(0);
    expect(service.stats.maxInFlight(SHARED_KEY)).toBeLessThanOrEqual(3);
    // Both organizations' windows together did use the budget: it is a cap, not a serial queue.
    expect(service.stats.maxInFlight(SHARED_KEY)).toBeGreaterThanOrEqual(2);
    expect(mirroredThreats(dbPath, 'acme')).toEqual(mirroredThreats(dbPath, 'globex'));
  });

  it('pauses every request of the key for a Retry-After, not only the one that got it', async () => {
    const service = await start(generateThreats({ seed: 7, organizations: ['acme'], count: 3000, fromDay: addDays(TODAY, -59), toDay: TODAY }), { [SHARED_KEY]: ['acme'] });
    service.setLatency(5);
    // The fifth request is refused with a 1 s Retry-After, while others of the key are in flight.
    const dbPath = tempDbPath();
    const waiting = service.waitForRequests(4).then(() => service.faults.enqueue({ kind: 'rateLimit', retryAfter: '1' }, { times: 1 }));
    const result = await runCli(['--backfill', '--from', addDays(TODAY, -59)], mirrorEnvFor(SHARED_KEY, NOW, RETRIES)(service, dbPath, { THREAT_MIRROR_CONCURRENCY: '4' }));
    await waiting;
    expect(result.code).toBe(0);
    const limited = service.stats.requests.find((request) => request.status === 429);
    expect(limited).toBeDefined();
    // No request of the key, whichever window sent it, arrived between the 429 reaching the client
    // and the end of the second it asked for; and the run went on after it.
    expect(service.stats.earlyRequests(SHARED_KEY)).toBe(0);
    expect(service.stats.requests.filter((request) => request.at >= (limited?.at ?? 0) + 1000).length).toBeGreaterThan(0);
    expect(mirroredThreats(dbPath, 'acme')).toHaveLength(3000);
  });
});
