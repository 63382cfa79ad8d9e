// The daemon beside a reader that never lets go (issue 13): the main thread never waits behind
// the reader's read transaction. /healthz answers fast, runs keep their schedule, SIGTERM exits
// in time, the WAL's growth and the starved checkpoints show in /metrics and /readyz, and the
// WAL shrinks again once the reader lets go.
import { expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats } from '../src/standin/index.js';
import { servingPort, startCli } from './support/cli.js';
import { startHoldingReader } from './support/holding-reader.js';
import { probeHealthz } from './support/probes.js';
import { scalar } from './support/mirror-db.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath } from './support/temp.js';

const KEY = 'acme-busy-readers-key';
const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
/**
 * The figure is 50 ms (measured by `npm run bench:busy-readers`); this bound is loose
 * enough for a loaded 2-core CI machine and far below the 5 s busy_timeout stall it guards against.
 */
const HEALTHZ_BOUND_MS = 1000;

const env = mirrorEnvFor(KEY, NOW);

async function metric(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  if (line === undefined) throw new Error(`no ${name} in /metrics`);
  return Number(line.split(' ')[1]);
}

/** Polls until `check` holds; the daemon's state changes on its own schedule, not ours. */
async function until<T>(what: string, probe: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last value ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

it('never stalls behind a reader that holds a read transaction, and shows the WAL it makes grow', async () => {
  const service = await serveThreats(KEY, NOW, generateThreats({ seed: 71, organizations: ['acme'], count: 400, fromDay: addDays(TODAY, -4), toDay: TODAY }));
  const dbPath = tempDbPath();
  const running = startCli(
    [],
    env(service, dbPath, { THREAT_MIRROR_INITIAL_DAYS: '5', THREAT_MIRROR_SCHEDULE: '*/1 * * * * *', THREAT_MIRROR_HTTP_PORT: '0', THREAT_MIRROR_WAL_STARVED_SECONDS: '2' }),
  );
  const port = await servingPort(running);
  await running.waitForLog((line) => line.status === 'succeeded');

  // /healthz every 100 ms for the whole test, timed from here.
  const { timings: healthz, stop: stopProbing } = probeHealthz(port);

  const reader = startHoldingReader(dbPath);
  expect(await reader.hold()).toBe('holding');
  const heldSince = Date.now();
  const runsBefore = running.logs.filter((line) => line.status === 'succeeded').length;
  const walAtHold = await metric(port, 'threat_mirror_wal_bytes');

  // New threats every few runs: the daemon writes while the reader holds its snapshot.
  let nextId = 8_000_000;
  const addThreat = (): void =>
    service.addThreats([{ id: nextId++, content: `https://held-${nextId}.example`, type: 'URL', blockedAt: `${TODAY}T11:00:00.000Z`, organization: 'acme' }]);
  addThreat();
  const starved = await until(
    'the starvation reason on /readyz',
    async () => {
      addThreat();
      const response = await fetch(`http://127.0.0.1:${port}/readyz`);
      return { status: response.status, body: (await response.json()) as { reasons: string[]; wal?: { bytes: number } } };
    },
    (value) => value.status === 503 && value.body.reasons.some((reason) => reason.includes('WAL checkpoints have not completed')),
  );
  expect(starved.body.reasons.join(' ')).toMatch(/THREAT_MIRROR_WAL_STARVED_SECONDS=2/);
  const walHeld = await metric(port, 'threat_mirror_wal_bytes');
  expect(walHeld).toBeGreaterThan(walAtHold);
  expect(await metric(port, 'threat_mirror_wal_checkpoint_starved_seconds')).toBeGreaterThan(2);
  // Runs kept their 1-second schedule while the reader held on (a stall behind busy_timeout
  // made them every ~5 s): at least half the ticks ran.
  const heldSeconds = (Date.now() - heldSince) / 1000;
  const runsWhileHeld = running.logs.filter((line) => line.status === 'succeeded').length - runsBefore;
  expect(runsWhileHeld).toBeGreaterThanOrEqual(Math.floor(heldSeconds / 2));
  expect(running.stdout + running.stderr).not.toMatch(/missed execution/);

  // The reader lets go: the next run's checkpoint truncates the WAL, and /readyz is ready again.
  expect(await reader.release()).toBe('released');
  await until('the WAL to shrink', () => metric(port, 'threat_mirror_wal_bytes'), (bytes) => bytes < walHeld && bytes === 0);
  await until('/readyz to be ready again', async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status, (status) => status === 200);

  // Holding again: SIGTERM still exits 0 in time (the WAL may stay un-truncated).
  expect(await reader.hold()).toBe('holding');
  addThreat();
  const succeeded = running.logs.filter((line) => line.status === 'succeeded').length;
  await running.waitForLog(() => running.logs.filter((line) => line.status === 'succeeded').length > succeeded);
  await stopProbing();
  const stopAsked = Date.now();
  running.kill('SIGTERM');
  const exit = await running.exited;
  expect(exit.code).toBe(0);
  expect(Date.now() - stopAsked).toBeLessThan(10_000);

  expect(healthz.length).toBeGreaterThan(10);
  expect(Math.max(...healthz)).toBeLessThan(HEALTHZ_BOUND_MS);
  expect(await reader.release()).toBe('released');
  expect(scalar(dbPath, 'PRAGMA integrity_check')).toBe('ok');
  expect(scalar<number>(dbPath, 'SELECT count(*) FROM threats')).toBeGreaterThan(400);
});
