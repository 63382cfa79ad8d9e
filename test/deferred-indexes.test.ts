// The first backfill into an empty mirror builds its lookup indexes once, at the end
// (src/db/deferred-indexes.ts): meanwhile every lookup still answers exactly, a kill leaves them
// recorded, and the next writer builds them exactly as the migrations defined them.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { buildDeferredIndexes, DEFERRABLE_INDEXES, deferLookupIndexes, deferredIndexes } from '../src/db/sql/deferred-indexes.js';
import { PageWriter } from '../src/db/writer/page-writer.js';
import { deriveLookupFields } from '../src/url/lookup-fields.js';
import { openWritableMirror } from './support/writable-mirror.js';
import { generateThreats } from '../src/standin/index.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { runCli, startCli } from './support/cli.js';
import { mirroredThreats, scalar, withDb } from './support/mirror-db.js';
import { tempDbPath, tempDir } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEY = 'acme-key-5f2b9c';
const mirrorEnv = mirrorEnvFor(KEY, NOW);


/** name → SQL of the threats table's indexes, as sqlite_master holds them. */
function threatIndexes(dbPath: string): Record<string, string> {
  return withDb(dbPath, (db) =>
    Object.fromEntries(
      (db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'threats' AND sql IS NOT NULL ORDER BY name").all() as Array<{ name: string; sql: string }>).map(
        (row) => [row.name, row.sql],
      ),
    ),
  );
}

/** The indexes a freshly migrated file has. */
async function migratedIndexes(): Promise<Record<string, string>> {
  const path = join(tempDir(), 'fresh.db');
  (await openWritableMirror(path)).close();
  return threatIndexes(path);
}

describe('lookup indexes of a first backfill', () => {
  it('are dropped only on an empty mirror, answer lookups exactly meanwhile, and come back as defined', async () => {
    const expected = await migratedIndexes();
    for (const name of DEFERRABLE_INDEXES) expect(expected[name]).toBeDefined();
    const path = tempDbPath();
    const opened = await openWritableMirror(path);
    try {
      const { sqlite } = opened;
      expect(deferLookupIndexes(sqlite, NOW)).toBe(DEFERRABLE_INDEXES.length);
      expect(deferredIndexes(sqlite).map((index) => index.name).sort()).toEqual([...DEFERRABLE_INDEXES].sort());
      // Deferring twice changes nothing.
      expect(deferLookupIndexes(sqlite, NOW)).toBe(0);
      const plan = sqlite.prepare("INSERT INTO sync_plans (organization, mode, range_start, range_end, created_at) VALUES ('acme', 'backfill', ?, ?, 'x') RETURNING id").pluck().get(TODAY, TODAY) as number;
      sqlite.prepare('INSERT INTO sync_cursors (plan_id, window_start, window_end) VALUES (?, ?, ?)').run(plan, TODAY, TODAY);
      const run = sqlite.prepare("INSERT INTO sync_runs (organization, mode, status, range_start, range_end, started_at) VALUES ('acme', 'backfill', 'running', ?, ?, 'x') RETURNING id").pluck().get(TODAY, TODAY) as number;
      new PageWriter(sqlite, { derive: deriveLookupFields }).write({
        organization: 'acme',
        runId: run,
        window: { planId: plan, windowStart: TODAY, windowEnd: TODAY },
        threats: [
          { id: 1, content: 'https://Phish.Example.com/login', type: 'URL', blockedAt: `${TODAY}T01:00:00Z` },
          { id: 2, content: 'eip155:1:0xAbC0000000000000000000000000000000000001', type: 'ADDRESS', blockedAt: `${TODAY}T02:00:00Z` },
          { id: 3, content: 'Bob@Scam.example.org', type: 'EMAIL', blockedAt: `${TODAY}T03:00:00Z` },
        ],
        rejected: [],
        nextPage: '2',
        retries: 0,
        now: NOW,
        windowSeenIds: null,
        windowDigests: null,
        windowPages: 1,
      });
      // Without their indexes, the lookups scan the table and still find every threat.
      const lookups = (): unknown[] => [
        sqlite.prepare('SELECT id FROM threats WHERE content = ?').pluck().get('https://Phish.Example.com/login'),
        sqlite.prepare('SELECT id FROM threats WHERE host = ?').pluck().get('phish.example.com'),
        sqlite.prepare('SELECT id FROM threats WHERE registrable_domain = ?').pluck().get('example.com'),
        sqlite.prepare('SELECT id FROM threats WHERE address = ?').pluck().get('0xabc0000000000000000000000000000000000001'),
        sqlite.prepare('SELECT id FROM threats WHERE email = ?').pluck().get('bob@scam.example.org'),
        sqlite.prepare('SELECT id FROM threats WHERE email_domain = ?').pluck().get('scam.example.org'),
        sqlite.prepare("SELECT rowid FROM threats_fts WHERE threats_fts MATCH 'phish'").pluck().get(),
      ];
      expect(lookups()).toEqual([1, 1, 1, 2, 3, 3, 1]);
      const plan1 = sqlite.prepare('EXPLAIN QUERY PLAN SELECT id FROM threats WHERE content = ?').all('x') as Array<{ detail: string }>;
      expect(plan1.map((row) => row.detail).join(' ')).not.toContain('threats_content');
      // A mirror with threats in it is never stripped.
      expect(buildDeferredIndexes(sqlite)).toBe(DEFERRABLE_INDEXES.length);
      expect(deferLookupIndexes(sqlite, NOW)).toBe(0);
      expect(deferredIndexes(sqlite)).toEqual([]);
      expect(lookups()).toEqual([1, 1, 1, 2, 3, 3, 1]);
      const plan2 = sqlite.prepare('EXPLAIN QUERY PLAN SELECT id FROM threats WHERE content = ?').all('x') as Array<{ detail: string }>;
      expect(plan2.map((row) => row.detail).join(' ')).toContain('threats_content');
    } finally {
      opened.close();
    }
    expect(threatIndexes(path)).toEqual(expected);
    expect(scalar(path, 'PRAGMA integrity_check')).toBe('ok');
  });

  it("leave the writer with SQLite's 2 MB page cache, which the build borrows and gives back", async () => {
    const opened = await openWritableMirror(tempDbPath());
    try {
      const { sqlite } = opened;
      // Not better-sqlite3's 16 MB: it only raised a first sync's peak (writer-pragmas.ts).
      const cacheSize = (): unknown => sqlite.pragma('cache_size', { simple: true });
      expect(cacheSize()).toBe(-2000);
      expect(deferLookupIndexes(sqlite, NOW)).toBe(DEFERRABLE_INDEXES.length);
      sqlite.pragma('cache_size = -4000');
      expect(buildDeferredIndexes(sqlite)).toBe(DEFERRABLE_INDEXES.length);
      expect(cacheSize()).toBe(-4000);
    } finally {
      opened.close();
    }
  });

  it('left unbuilt by a kill, are built by the next start, which then completes the data exactly', async () => {
    const expectedIndexes = await migratedIndexes();
    const from = addDays(TODAY, -39);
    const standin = await serveThreats(KEY, NOW, generateThreats({ seed: 21, organizations: ['acme'], count: 8000, fromDay: from, toDay: TODAY }));
    standin.setLatency(15);
    const dbPath = tempDbPath();
    const env = mirrorEnv(standin, dbPath);
    const args = ['--backfill', '--from', from];
    const first = startCli(args, { ...env, LOG_LEVEL: 'debug', THREAT_MIRROR_CONCURRENCY: '2' });
    await first.waitForLog((line) => line.msg === 'page committed');
    first.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    // Killed mid-way: the indexes are still recorded as deferred, and what was committed is found.
    const deferred = withDb(dbPath, (db) => deferredIndexes(db).map((index) => index.name).sort());
    expect(deferred).toEqual([...DEFERRABLE_INDEXES].sort());
    const committed = withDb(dbPath, (db) => db.prepare('SELECT id, content FROM threats ORDER BY id LIMIT 20').all() as Array<{ id: number; content: string }>);
    expect(committed.length).toBeGreaterThan(0);
    withDb(dbPath, (db) => {
      for (const row of committed) expect(db.prepare('SELECT id FROM threats WHERE content = ?').pluck().all(row.content)).toContain(row.id);
    });
    const second = await runCli(args, env);
    expect(second.code).toBe(0);
    expect(threatIndexes(dbPath)).toEqual(expectedIndexes);
    expect(withDb(dbPath, (db) => deferredIndexes(db))).toEqual([]);
    const expected = standin.threatsVisibleTo(KEY).map((threat) => threat.id).sort((a, b) => a - b);
    expect(mirroredThreats(dbPath, 'acme').map((threat) => threat.id).sort((a, b) => a - b)).toEqual(expected);
    expect(scalar(dbPath, 'PRAGMA integrity_check')).toBe('ok');
  });

  it('of an uninterrupted first backfill are all built when the CLI exits', async () => {
    const expectedIndexes = await migratedIndexes();
    const from = addDays(TODAY, -9);
    const standin = await serveThreats(KEY, NOW, generateThreats({ seed: 22, organizations: ['acme'], count: 1500, fromDay: from, toDay: TODAY }));
    const dbPath = tempDbPath();
    const env = mirrorEnv(standin, dbPath);
    const result = await runCli(['--backfill', '--from', from], env);
    expect(result.code).toBe(0);
    expect(threatIndexes(dbPath)).toEqual(expectedIndexes);
    expect(withDb(dbPath, (db) => deferredIndexes(db))).toEqual([]);
    expect(scalar(dbPath, 'SELECT count(*) FROM threats')).toBe(standin.threatsVisibleTo(KEY).length);
  });
});
