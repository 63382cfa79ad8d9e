// A writer's start never fails because a reader reads (issue 40, case 6): the file rests in WAL
// mode with its -wal and -shm files, so a cron-style `--once` beside a reader that holds a read
// transaction (a report query, a BI tool) goes on at every run, and a reader on a read-only mount
// still opens the file after a clean stop; a file at rest in rollback mode (an older version's
// stop, a copied snapshot) waits for the reader, says so, and goes on.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { runCli } from './support/cli.js';
import { startHoldingReader } from './support/holding-reader.js';
import { scalar, withDb, withWritableDb } from './support/mirror-db.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDir } from './support/temp.js';
import { readAsUnprivilegedReader, shareFolder } from './support/unprivileged-reader.js';
import { threatsOfDay } from './support/walk-data.js';

const NOW = '2026-11-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEY = 'acme-key-40-reader';
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: '3', LOG_LEVEL: 'info' });

/** A mirror file in a folder others may read, as a volume shared with a reader's container is. */
function sharedDbPath(): string {
  const folder = tempDir();
  shareFolder(folder);
  return join(folder, 'mirror.db');
}

describe('case 6: a writer beside a reader holding a long read transaction', { timeout: 120_000 }, () => {
  it('goes on at each of three cron-style --once runs, and leaves the file readable from a read-only mount', async () => {
    const service = await serveThreats(KEY, NOW, threatsOfDay(TODAY, 800_000, 50));
    const dbPath = sharedDbPath();
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    // At rest in WAL mode, its WAL folded in, -wal and -shm in place (checked below, after the runs it is for).
    const atRest = { mode: scalar(dbPath, 'PRAGMA journal_mode'), wal: existsSync(`${dbPath}-wal`) ? statSync(`${dbPath}-wal`).size : null, shm: existsSync(`${dbPath}-shm`) };

    const reader = startHoldingReader(dbPath);
    expect(await reader.hold()).toBe('holding');
    for (let run = 1; run <= 3; run += 1) {
      service.addThreats(threatsOfDay(TODAY, 800_000 + run * 100, 10).map((threat) => ({ ...threat, blockedAt: `${TODAY}T0${run}:30:00.000Z` })));
      const started = Date.now();
      const result = await runCli(['--once'], env(service, dbPath));
      expect(result.stderr, `run ${run}`).toBe('');
      expect(result.code, `run ${run}`).toBe(0);
      // busy_timeout is 5 s: a start that waited for the reader would take that long and fail.
      expect(Date.now() - started, `run ${run}`).toBeLessThan(4_500);
    }
    expect(withDb(dbPath, (db) => db.prepare('SELECT count(*) FROM threats').pluck().get())).toBe(80);
    expect(await reader.release()).toBe('released');
    expect(atRest).toEqual({ mode: 'wal', wal: 0, shm: true });

    // After the writer's clean stop, a reader that cannot write the folder opens the file.
    expect(await readAsUnprivilegedReader(dbPath)).toMatchObject({ ok: true, threats: 80, quickCheck: 'ok', journalMode: 'wal' });
  });

  it('waits for the reader when the file rests in rollback mode, says how long, and goes on', async () => {
    const service = await serveThreats(KEY, NOW, threatsOfDay(addDays(TODAY, -1), 810_000, 20));
    const dbPath = sharedDbPath();
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    // As an older version left it at its clean stop, or a snapshot copied into place.
    withWritableDb(dbPath, (db) => db.pragma('journal_mode = DELETE'));
    expect(existsSync(`${dbPath}-wal`)).toBe(false);

    const reader = startHoldingReader(dbPath);
    expect(await reader.hold()).toBe('holding');
    // Held past the 5 s busy_timeout, then let go.
    const released = new Promise<string>((resolve) => setTimeout(() => resolve(reader.release()), 6_000));
    const result = await runCli(['--once'], env(service, dbPath));
    expect(await released).toBe('released');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const waited = result.logs.find((line) => typeof line.waitedMs === 'number');
    expect(waited?.level).toBe(40);
    expect(waited?.waitedMs as number).toBeGreaterThan(5_000);
    expect(String(waited?.msg)).toMatch(/at rest in delete journal mode .* it rests in WAL mode from now on/);
    expect(scalar(dbPath, 'PRAGMA journal_mode')).toBe('wal');
  });
});
