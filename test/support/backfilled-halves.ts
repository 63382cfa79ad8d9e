// A mirror of ten days of 20 threats each before `now`'s day, backfilled in two halves: the last
// five days first, the first five an hour later. A reconciliation after both are due walks the
// last five first (the longest unwalked), in one window of one page: the reconciliation tests'
// smallest case of a window whose checks a budget of 1 carries over.
import { expect } from 'vitest';
import { addDays } from '../../src/lib/days.js';
import type { Standin, StandinThreat } from '../../src/standin/index.js';
import { runCli } from './cli.js';
import { type MirrorEnv, serveThreats } from './service.js';
import { tempDbPath } from './temp.js';
import { threatsOfDay } from './walk-data.js';

export interface BackfilledHalves {
  readonly service: Standin;
  readonly dbPath: string;
  readonly threats: readonly StandinThreat[];
  /** The first and last days of each half. */
  readonly first: string;
  readonly fifth: string;
  readonly sixth: string;
  readonly tenth: string;
}

/** `env` sets THREAT_MIRROR_NOW to `now`; the second backfill runs an hour after it. */
export async function backfilledHalves(key: string, now: string, env: MirrorEnv): Promise<BackfilledHalves> {
  const days = Array.from({ length: 10 }, (_, index) => addDays(now.slice(0, 10), index - 10));
  const [first, fifth, sixth, tenth] = [days[0], days[4], days[5], days[9]] as [string, string, string, string];
  const threats = days.flatMap((day, index) => threatsOfDay(day, 300_000 + index * 1000, 20));
  const service = await serveThreats(key, now, threats);
  const dbPath = tempDbPath();
  const anHourLater = new Date(Date.parse(now) + 3_600_000).toISOString();
  expect((await runCli(['--backfill', '--from', sixth, '--to', tenth], env(service, dbPath))).code).toBe(0);
  expect((await runCli(['--backfill', '--from', first, '--to', fifth], env(service, dbPath, { THREAT_MIRROR_NOW: anHourLater }))).code).toBe(0);
  return { service, dbPath, threats, first, fifth, sixth, tenth };
}
