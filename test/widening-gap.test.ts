// A widened scope walks the added types over the days already mirrored, and a day it walks enters
// the ledger only if a whole walk had recorded it: a day no walk of the other types covered (a gap
// a backfill left before the history walk reached it) stays unwalked, so the history walk still
// walks it whole and history_from claims it only then. Found by review (2026-12-07): the widening
// recorded the gap as walked, history_from jumped to the target, and `lookup` vouched "not
// blocked" for URLs of the gap the service lists, until a reconciliation came round to them.
import { expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import type { StandinThreat } from '../src/standin/index.js';
import { runCli } from './support/cli.js';
import { withDb } from './support/mirror-db.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath } from './support/temp.js';
import { currentThreats, listed } from './support/walk-data.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEY = 'acme-widening-gap-key';
const TARGET = addDays(TODAY, -40);

it('a widening leaves a gap of the ledger unwalked: the history walk fills it before history_from claims it', async () => {
  const threats: StandinThreat[] = [];
  for (let back = 0; back <= 40; back += 1) {
    const day = addDays(TODAY, -back);
    threats.push({ id: 2 * back + 1, content: `https://url-${back}.example/`, type: 'URL', blockedAt: `${day}T10:00:00.000Z`, organization: 'acme' });
    threats.push({ id: 2 * back + 2, content: `https://page-${back}.example/p`, type: 'PAGE', blockedAt: `${day}T11:00:00.000Z`, organization: 'acme' });
  }
  const service = await serveThreats(KEY, NOW, threats);
  const dbPath = tempDbPath();
  const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: '10', THREAT_MIRROR_HISTORY_FROM: TARGET });
  const historyFrom = (): string | null => withDb(dbPath, (db) => db.prepare("SELECT history_from FROM sync_status WHERE organization = 'acme'").pluck().get() as string | null);
  // URL only, the history walk off: the last 10 days; then a backfill of the oldest: a gap between.
  expect((await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_ASSET_TYPES: 'URL', THREAT_MIRROR_HISTORY_MAX_REQUESTS: '0' }))).code).toBe(0);
  expect((await runCli(['--backfill', '--from', TARGET, '--to', addDays(TODAY, -30)], env(service, dbPath, { THREAT_MIRROR_ASSET_TYPES: 'URL' }))).code).toBe(0);
  expect(historyFrom()).toBe(addDays(TODAY, -9));

  // The scope widens, the walk on: every run either leaves history_from short of the target or
  // holds every threat the service lists.
  for (let run = 1; historyFrom() !== TARGET; run += 1) {
    expect(run, `history_from ${historyFrom()}`).toBeLessThanOrEqual(3);
    expect((await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_ASSET_TYPES: 'PAGE,URL' }))).code).toBe(0);
  }
  expect(currentThreats(dbPath)).toEqual(listed(service, KEY));
  const lookup = await runCli(['lookup', 'https://url-20.example/'], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW });
  expect(lookup.code, lookup.stdout).toBe(0);
});
