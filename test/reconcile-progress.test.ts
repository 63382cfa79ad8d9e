// Reconciliation always moves on (issue 33 item 4): a window that grew past the run's request
// budget since its last walk is cut into windows that fit, with a warning naming its days, and the
// overdue days fall run after run until the cycle completes. The compiled CLI against the stand-in.
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { runCli } from './support/cli.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath } from './support/temp.js';
import { currentThreats, listed, overdueDays, removedIds, threatsOfDay } from './support/walk-data.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
/** Eight days later: every day the backfills walked is due (THREAT_MIRROR_RECONCILE_DAYS 7). */
const LATER = '2026-03-23T12:00:00.000Z';
const KEY = 'acme-key-5f2b9c';
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_RETRY_MIN_MS: '5', THREAT_MIRROR_RETRY_MAX_MS: '50', LOG_LEVEL: 'info' });

describe('reconciliation', { timeout: 180_000 }, () => {
  it('cuts a window that outgrew the request budget into windows that fit, and reaches every due day', async () => {
    // Four days of exactly 500 threats, walked first (an hour earlier): one window of exactly 20 requests, the default budget.
    const heavy = addDays(TODAY, -40);
    const heavyDays = Array.from({ length: 4 }, (_, index) => threatsOfDay(addDays(heavy, index), 100_000 + index * 1000, 500)).flat();
    const light = Array.from({ length: 36 }, (_, index) => threatsOfDay(addDays(heavy, 4 + index), 200_000 + index * 100, 20)).flat();
    const service = await serveThreats(KEY, NOW, [...heavyDays, ...light]);
    const dbPath = tempDbPath();
    expect((await runCli(['--backfill', '--from', heavy, '--to', addDays(heavy, 3)], env(service, dbPath, { THREAT_MIRROR_NOW: '2026-03-15T11:00:00.000Z' }))).code).toBe(0);
    expect((await runCli(['--backfill', '--from', addDays(heavy, 4)], env(service, dbPath))).code).toBe(0);

    // A late arrival makes the four days 2,001 threats (21 requests); a threat 20 days old is unblocked.
    service.addThreats([{ id: 150_000, content: 'https://late.example/', type: 'URL', blockedAt: `${addDays(heavy, 1)}T23:00:00.000Z`, organization: 'acme' }]);
    const unblocked = light.find((threat) => threat.blockedAt.startsWith(addDays(TODAY, -20)));
    if (!unblocked) throw new Error('no threat 20 days back');
    service.removeThreats([unblocked.id]);

    const overdue: number[] = [];
    const warnings: string[] = [];
    for (let run = 0; run < 10 && overdue.at(-1) !== 0; run += 1) {
      const result = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_NOW: LATER }));
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      overdue.push(overdueDays(dbPath));
      for (const line of result.logs) if (line.level === 40 && typeof line.days === 'string') warnings.push(line.days);
    }
    expect(overdue.at(-1)).toBe(0);
    for (let index = 1; index < overdue.length; index += 1) expect(overdue[index]).toBeLessThan(overdue[index - 1] as number);
    expect(warnings[0]).toBe(`${heavy}..${addDays(heavy, 3)}`);
    expect(removedIds(dbPath)).toEqual([unblocked.id]);
    expect(currentThreats(dbPath)).toEqual(listed(service, KEY));
  });
});
