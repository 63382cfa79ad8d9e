// A backfill whose --from lies long before the data (issue 41): the windows after the empty days are
// sized from what is there, never from a density near zero, so it runs with every worker busy, as
// fast as one from the data's first day; its progress moves with the pages, and its ETA never
// grows steadily while work is done. (Tight figures: docs/performance.md.)
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats, type RequestRecord, type Standin } from '../src/standin/index.js';
import { CLI_PATH, runCli } from './support/cli.js';
import { afterThisTest } from './support/cleanup.js';
import { skipWithout } from './support/judges.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath } from './support/temp.js';
import { currentThreats, listed } from './support/walk-data.js';

const KEY = 'acme-sparse-key';
const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
/** The data: 20,000 threats over the last 30 days. */
const DATA_FROM = addDays(TODAY, -29);
/** The README's --from, long before: 300 empty days first. */
const EARLY_FROM = addDays(DATA_FROM, -300);
const env = mirrorEnvFor(KEY, NOW);

function serve(latencyMs: number): Promise<Standin> {
  return serveThreats(KEY, NOW, generateThreats({ seed: 4177, organizations: ['acme'], count: 20_000, fromDay: DATA_FROM, toDay: TODAY }), { latencyMs });
}

/** Each window's requests (by its range; a probe is sorted by blockedAt and is no window's). */
function windowPages(requests: readonly RequestRecord[]): number[] {
  const pages = new Map<string, number>();
  for (const request of requests) {
    const body = request.body as { startDate: string; endDate: string; sorting: Array<{ key: string }> };
    if (body.sorting[0]?.key !== 'id') continue;
    const range = `${body.startDate}..${body.endDate}`;
    pages.set(range, (pages.get(range) ?? 0) + 1);
  }
  return [...pages.values()];
}

async function backfill(service: Standin, from: string): Promise<{ ms: number; requests: readonly RequestRecord[] }> {
  const dbPath = tempDbPath();
  const before = service.stats.requests.length;
  const started = Date.now();
  const result = await runCli(['--backfill', '--from', from], env(service, dbPath));
  const ms = Date.now() - started;
  expect(result.code, result.stderr).toBe(0);
  expect(currentThreats(dbPath)).toEqual(listed(service, KEY));
  return { ms, requests: service.stats.requests.slice(before) };
}

/** Runs the CLI on a pseudo-terminal (util-linux `script`); all it printed. */
function runOnTerminal(args: readonly string[], extra: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const command = [CLI_PATH, ...args].map((word) => `'${word}'`).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], { env: { PATH: process.env.PATH ?? '', TERM: 'xterm', ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
  afterThisTest('processes', () => child.kill('SIGKILL'));
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output })));
}

describe('a backfill of a sparse range', { timeout: 180_000 }, () => {
  it('stays parallel after the empty days: no window much larger than from the data, about as fast (within 1.5× here; 20% measured)', async () => {
    const service = await serve(10);
    const sparse: number[] = [];
    const dense: number[] = [];
    let sparseRequests: readonly RequestRecord[] = [];
    let denseRequests: readonly RequestRecord[] = [];
    // Alternated, so that a slow spell of a loaded machine falls on both alike.
    for (let round = 0; round < 2; round += 1) {
      const early = await backfill(service, EARLY_FROM);
      sparse.push(early.ms);
      sparseRequests = early.requests;
      const first = await backfill(service, DATA_FROM);
      dense.push(first.ms);
      denseRequests = first.requests;
    }
    // Before: one window took everything after the empty days, 200 requests one after another.
    expect(Math.max(...windowPages(sparseRequests))).toBeLessThanOrEqual(Math.max(...windowPages(denseRequests)) * 1.5 + 5);
    // Requests: the data's pages, a partial page a window, the empty days' few windows and probes.
    expect(sparseRequests.length).toBeLessThanOrEqual(denseRequests.length * 1.1 + 10);
    expect(Math.min(...sparse)).toBeLessThanOrEqual(Math.max(...dense) * 1.5);
  });

  it.skipIf(skipWithout(['script']))('moves its progress line with the pages, and its ETA never grows steadily while it works', async () => {
    const service = await serve(20);
    const dbPath = tempDbPath();
    const { code, output } = await runOnTerminal(['--backfill', '--from', EARLY_FROM], { THREAT_MIRROR_API_URL: service.url, THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_ORG: 'acme', THREAT_MIRROR_API_KEY: KEY, THREAT_MIRROR_NOW: NOW });
    expect(code, output).toBe(0);
    const states = output
      .split(/\r|\n/)
      .map((text) => text.replaceAll('\x1b[K', ''))
      .filter((text) => /^backfill \d+%: /.test(text));
    const percentages = states.map((state) => Number(/^backfill (\d+)%/.exec(state)?.[1]));
    expect(percentages).toEqual([...percentages].sort((a, b) => a - b));
    // Past the empty days (about 90% of the range's days), the line keeps moving: before, it sat still until the one window ended.
    expect(new Set(percentages.filter((percent) => percent > 0 && percent < 100)).size, states.join('\n')).toBeGreaterThanOrEqual(4);
    const etas = states.map((state) => /, ETA (?:(\d+)m)?(\d+)s$/.exec(state)).filter((match) => match !== null).map((match) => Number(match[1] ?? 0) * 60 + Number(match[2]));
    let rising = 0;
    let longestRise = 0;
    for (let index = 1; index < etas.length; index += 1) {
      rising = (etas[index] as number) > (etas[index - 1] as number) ? rising + 1 : 0;
      longestRise = Math.max(longestRise, rising);
    }
    expect(longestRise, states.join('\n')).toBeLessThanOrEqual(3);
  });
});
