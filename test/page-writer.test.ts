// The page writer on a real SQLite file: a page that fails to write never lets a later page of
// its window move the window's cursor past it, and does not take other windows down with it.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReportRecord, Threat } from '../src/records.js';
import { ReportRows } from '../src/db/sql/reports.js';
import { type PageInput, PageNotWrittenError, PageWriter } from '../src/db/writer/page-writer.js';
import type { WriterClient } from '../src/db/writer/writer-client.js';
import { LedgerReads } from '../src/db/read/ledger-reads.js';
import { deferredIndexes } from '../src/db/sql/deferred-indexes.js';
import { digestHex } from '../src/db/content-hash.js';
import { deriveLookupFields } from '../src/url/lookup-fields.js';
import { openWritableMirror, type WritableMirror } from './support/writable-mirror.js';
import { WindowSeen } from '../src/sync/window-seen.js';
import { tempDir } from './support/temp.js';

let opened: WritableMirror | undefined;
afterEach(() => {
  opened?.close();
  opened = undefined;
});

const DAY = '2026-03-01';

function threat(id: number): Threat {
  return { id, content: `https://t${id}.example/`, type: 'URL', blockedAt: `${DAY}T10:00:00Z` };
}

/** A run with one plan of two windows, A and B, as the sync would have recorded them. */
function setUp(sqlite: Database.Database): { planId: number; runId: (n: number) => number } {
  const plan = sqlite
    .prepare(`INSERT INTO sync_plans (organization, mode, range_start, range_end, created_at) VALUES ('acme', 'backfill', ?, ?, 'x') RETURNING id`)
    .pluck()
    .get(DAY, '2026-03-02') as number;
  for (const day of [DAY, '2026-03-02']) {
    sqlite.prepare('INSERT INTO sync_cursors (plan_id, window_start, window_end) VALUES (?, ?, ?)').run(plan, day, day);
  }
  const runs = new Map<number, number>();
  const runId = (n: number): number => {
    let id = runs.get(n);
    if (id === undefined) {
      id = sqlite
        .prepare(`INSERT INTO sync_runs (organization, mode, status, range_start, range_end, started_at) VALUES ('acme', 'backfill', 'running', ?, ?, 'x') RETURNING id`)
        .pluck()
        .get(DAY, '2026-03-02') as number;
      runs.set(n, id);
    }
    return id;
  };
  return { planId: plan, runId };
}

let stampMs = Date.parse('2026-03-03T00:00:00Z');
function page(planId: number, runId: number, windowStart: string, ids: number[], nextPage: string): PageInput {
  stampMs += 1;
  return {
    organization: 'acme',
    runId,
    window: { planId, windowStart, windowEnd: windowStart },
    threats: ids.map(threat),
    rejected: [],
    nextPage,
    retries: 0,
    now: new Date(stampMs).toISOString(),
    windowSeenIds: null,
    windowDigests: null,
    windowPages: 1,
  };
}

describe('PageWriter.writeBatch', () => {
  it('stops a window at its failed page, keeps the others, and lets the next run resume it', async () => {
    opened = await openWritableMirror(join(tempDir(), 'mirror.db'));
    const { sqlite } = opened;
    const { planId, runId } = setUp(sqlite);
    // A fault SQLite itself raises, as a full disk or a corrupt page would, for one record only.
    sqlite.exec(`CREATE TRIGGER inject_fault BEFORE INSERT ON threats WHEN NEW.id = 13 BEGIN SELECT RAISE(ABORT, 'injected fault'); END`);
    const writer = new PageWriter(sqlite, { derive: deriveLookupFields });
    const cursor = (windowStart: string): string | null =>
      sqlite.prepare('SELECT next_page FROM sync_cursors WHERE plan_id = ? AND window_start = ?').pluck().get(planId, windowStart) as string | null;
    const held = (): number[] => sqlite.prepare('SELECT id FROM threats ORDER BY id').pluck().all() as number[];

    const outcomes = writer.writeBatch([
      page(planId, runId(1), DAY, [11, 12], 'a2'),
      page(planId, runId(1), DAY, [13, 14], 'a3'),
      page(planId, runId(1), '2026-03-02', [21, 22], 'b2'),
      page(planId, runId(1), DAY, [15, 16], 'a4'),
    ]);
    expect(outcomes.map((outcome) => outcome.error?.message ?? 'written')).toEqual([
      'written',
      'injected fault',
      'written',
      `an earlier page of window ${DAY}..${DAY} was not written (injected fault)`,
    ]);
    expect(outcomes[3]?.error).toBeInstanceOf(PageNotWrittenError);
    expect(held()).toEqual([11, 12, 21, 22]);
    expect(cursor(DAY)).toBe('a2');
    expect(cursor('2026-03-02')).toBe('b2');

    // Still in the same run, in a batch of its own: the window stays stopped, the other goes on.
    const later = writer.writeBatch([page(planId, runId(1), DAY, [15, 16], 'a4'), page(planId, runId(1), '2026-03-02', [23], 'b3')]);
    expect(later.map((outcome) => (outcome.error ? outcome.error.name : 'written'))).toEqual(['PageNotWrittenError', 'written']);
    expect(cursor(DAY)).toBe('a2');
    expect(cursor('2026-03-02')).toBe('b3');

    // The fault gone, the next run resumes the window from its cursor.
    sqlite.exec('DROP TRIGGER inject_fault');
    const resumed = writer.writeBatch([page(planId, runId(2), DAY, [13, 14], 'a3'), page(planId, runId(2), DAY, [15, 16], 'a4')]);
    expect(resumed.map((outcome) => outcome.error?.message ?? 'written')).toEqual(['written', 'written']);
    expect(held()).toEqual([11, 12, 13, 14, 15, 16, 21, 22, 23]);
    expect(cursor(DAY)).toBe('a4');
  });

  it('writes a batch of healthy pages and counts what each one changed', async () => {
    opened = await openWritableMirror(join(tempDir(), 'mirror.db'));
    const { sqlite } = opened;
    const { planId, runId } = setUp(sqlite);
    const writer = new PageWriter(sqlite, { derive: deriveLookupFields });
    const outcomes = writer.writeBatch([page(planId, runId(1), DAY, [1, 2, 3], 'a2'), page(planId, runId(1), DAY, [3, 4], 'a3')]);
    expect(outcomes.map((outcome) => outcome.result)).toEqual([
      { inserted: 3, updated: 0, rejected: 0, removed: 0 },
      { inserted: 1, updated: 0, rejected: 0, removed: 0 },
    ]);
  });
});

describe('a write over rows another process stored', () => {
  it('tells an update from an insert by what was stored, though the rows carry its very stamp, and joins the moved day to every ledger holding the threat', async () => {
    opened = await openWritableMirror(join(tempDir(), 'mirror.db'));
    const { sqlite } = opened;
    const { planId, runId } = setUp(sqlite);
    // Two processes, each with a clock of its own that reads the same instant (a replica's primary
    // ahead of this pod's clock, a clock set back, a test's fixed THREAT_MIRROR_NOW).
    const now = '2026-03-03T12:00:00.000Z';
    const stored = new PageWriter(sqlite, { derive: deriveLookupFields }).write({ ...page(planId, runId(1), DAY, [1, 2], 'a2'), now });
    expect(stored).toMatchObject({ inserted: 2, updated: 0 });
    sqlite.prepare("INSERT INTO organization_threats (organization, threat_id, first_seen_at, type) VALUES ('beta', 1, ?, 'URL')").run(now);

    const moved: Threat = { ...threat(1), content: 'https://t1.example/moved', blockedAt: '2026-02-20T10:00:00Z' };
    const next = new PageWriter(sqlite, { derive: deriveLookupFields });
    const written = next.write({ ...page(planId, runId(2), DAY, [], 'a3'), threats: [moved, threat(3)], now });
    expect(written).toMatchObject({ inserted: 1, updated: 1 });
    expect(sqlite.prepare('SELECT threats_inserted, threats_updated FROM sync_runs WHERE id = ?').get(runId(2))).toEqual({ threats_inserted: 1, threats_updated: 1 });
    // beta's walks never looked at 2026-02-20: the threat moved there must bring that day to them.
    expect(sqlite.prepare("SELECT day FROM sync_windows WHERE organization = 'beta'").pluck().all()).toEqual(['2026-02-20']);
  });

  it('tells a report updated from one inserted the same way', async () => {
    opened = await openWritableMirror(join(tempDir(), 'mirror.db'));
    const rows = new ReportRows(opened.sqlite);
    const stamp = '2026-03-03T12:00:00.000Z';
    const report = (status: string): ReportRecord => ({ id: '7', createdAt: '2026-03-01T00:00:00Z', status, proposals: [], raw: JSON.stringify({ id: 7, status }) });
    expect(rows.write('acme', report('pending'), 1, stamp)).toBe('inserted');
    expect(rows.write('acme', report('pending'), 2, stamp)).toBe('unchanged');
    expect(rows.write('acme', report('approved'), 2, stamp)).toBe('updated');
  });
});

describe('the ledger of a completed window', () => {
  /** One window's walk from its first page: each page is shown to a WindowSeen, as the sync does. */
  function walk(planId: number, runId: number, windowStart: string, pages: Threat[][]): PageInput[] {
    const seen = new WindowSeen(windowStart, windowStart);
    return pages.map((threats, index) => {
      const last = index === pages.length - 1;
      seen.add(threats, index + 1, last);
      stampMs += 1;
      return {
        organization: 'acme',
        runId,
        window: { planId, windowStart, windowEnd: windowStart },
        threats,
        rejected: [],
        nextPage: last ? null : `p${index + 2}`,
        retries: 0,
        now: new Date(stampMs).toISOString(),
        windowSeenIds: last ? seen.ids : null,
        windowDigests: last ? seen.digests : null,
        windowPages: index + 1,
      };
    });
  }

  /** What the ledger recorded for a day, and the digest of the rows the file holds for it. */
  function ledgerAndRows(sqlite: Database.Database, day: string): { ledger: unknown; rows: unknown } {
    const ledger = sqlite.prepare("SELECT records, content_hash AS hash FROM sync_windows WHERE organization = 'acme' AND day = ?").get(day);
    const digest = new LedgerReads(sqlite).currentDigests('acme', day, day).get(day);
    return { ledger, rows: { records: digest?.records ?? 0, hash: digest ? digestHex(digest) : '0000000000000000' } };
  }

  const on = (id: number, day: string, content = `https://t${id}.example/`): Threat => ({ id, content, type: 'URL', blockedAt: `${day}T10:00:00Z` });

  it("records the walk's digest, equal to the rows', and hands back what the walk did not return; removes only what the conclusion confirms", async () => {
    opened = await openWritableMirror(join(tempDir(), 'mirror.db'));
    const { sqlite } = opened;
    const { planId, runId } = setUp(sqlite);
    const writer = new PageWriter(sqlite, { derive: deriveLookupFields });
    writer.writeBatch(walk(planId, runId(1), DAY, [[on(1, DAY), on(2, DAY), on(5, DAY)]]));
    // Another organization's threat of the same day, which acme's walks never return.
    writer.writeBatch(walk(planId, runId(1), DAY, [[on(9, DAY)]]).map((input) => ({ ...input, organization: 'globex' })));
    // The next walk no longer returns 5, and 2's content changed.
    const outcomes = writer.writeBatch(walk(planId, runId(2), DAY, [[on(1, DAY), on(2, DAY, 'https://changed.example/')], [on(3, DAY)]]));
    // 5 is a candidate, not a removal: the window stays open until the sync has asked the service.
    expect(outcomes.at(-1)?.result).toMatchObject({ removed: 0, candidates: [on(5, DAY)] });
    expect(sqlite.prepare('SELECT completed_at FROM sync_cursors WHERE plan_id = ? AND window_start = ?').pluck().get(planId, DAY)).toBeNull();
    expect(sqlite.prepare("SELECT count(*) FROM organization_threats WHERE removed_at IS NOT NULL").pluck().get()).toBe(0);
    const window = { planId, windowStart: DAY, windowEnd: DAY };
    const concluded = writer.conclude({ organization: 'acme', runId: runId(2), window, removedIds: [5], found: [], complete: true, windowPages: 2, now: new Date((stampMs += 1)).toISOString() });
    expect(concluded).toEqual({ inserted: 0, updated: 0, rejected: 0, removed: 1 });
    const { ledger, rows } = ledgerAndRows(sqlite, DAY);
    expect(ledger).toEqual(rows);
    expect(ledger).toMatchObject({ records: 3 });
    const current = sqlite.prepare('SELECT organization, threat_id FROM organization_threats WHERE removed_at IS NULL ORDER BY 1, 2').all();
    expect(current).toEqual([1, 2, 3].map((id) => ({ organization: 'acme', threat_id: id })).concat([{ organization: 'globex', threat_id: 9 }]));
  });

  it('reads the window back when an id came twice in a page: the copy written last counts', async () => {
    opened = await openWritableMirror(join(tempDir(), 'mirror.db'));
    const { sqlite } = opened;
    const { planId, runId } = setUp(sqlite);
    const writer = new PageWriter(sqlite, { derive: deriveLookupFields });
    writer.writeBatch(walk(planId, runId(1), DAY, [[on(1, DAY), on(2, DAY), on(2, DAY, 'https://second-copy.example/')]]));
    const { ledger, rows } = ledgerAndRows(sqlite, DAY);
    expect(ledger).toEqual(rows);
    expect(ledger).toMatchObject({ records: 2 });
  });

  it('reads the window back when a threat it saw was stored under another day before it completed', async () => {
    opened = await openWritableMirror(join(tempDir(), 'mirror.db'));
    const { sqlite } = opened;
    const { planId, runId } = setUp(sqlite);
    const writer = new PageWriter(sqlite, { derive: deriveLookupFields });
    const [first, last] = walk(planId, runId(1), DAY, [[on(1, DAY), on(2, DAY)], [on(7, DAY)]]) as [PageInput, PageInput];
    const nextDay = '2026-03-02';
    writer.writeBatch([first]);
    // The other window's walk meets 2 again, moved to its day by the service meanwhile.
    writer.writeBatch(walk(planId, runId(1), nextDay, [[on(2, nextDay)]]));
    writer.writeBatch([last]);
    const { ledger, rows } = ledgerAndRows(sqlite, DAY);
    expect(ledger).toEqual(rows);
    expect(ledger).toMatchObject({ records: 2 });
    expect(ledgerAndRows(sqlite, nextDay).ledger).toMatchObject({ records: 1 });
  });
});

describe("a window's conclusion", () => {
  const on = (id: number, day: string): Threat => ({ id, content: `https://t${id}.example/`, type: 'URL', blockedAt: `${day}T10:00:00Z` });
  const cursorRow = (sqlite: Database.Database, planId: number): unknown =>
    sqlite.prepare('SELECT next_page AS nextPage, pages, records, last_id AS lastId, started_at AS startedAt, completed_at AS completedAt FROM sync_cursors WHERE plan_id = ? AND window_start = ?').get(planId, DAY);

  it('writes a threat still listed elsewhere, removes nothing else, and sends a window the walk missed a record of back to its first page', async () => {
    opened = await openWritableMirror(join(tempDir(), 'mirror.db'));
    const { sqlite } = opened;
    const { planId, runId } = setUp(sqlite);
    const writer = new PageWriter(sqlite, { derive: deriveLookupFields });
    const stamp = (): string => new Date((stampMs += 1)).toISOString();
    const firstPage = (ids: number[], nextPage: string | null): PageInput => ({
      ...page(planId, runId(1), DAY, ids, nextPage ?? 'x'), nextPage, requestedPage: null, walkStartedAt: '2026-03-03T00:00:00.000Z',
      windowSeenIds: nextPage === null ? new Set(ids) : null,
    });
    writer.writeBatch([firstPage([1, 2, 3], null)]);
    expect(cursorRow(sqlite, planId)).toMatchObject({ nextPage: null, pages: 1, records: 3, lastId: 3, startedAt: '2026-03-03T00:00:00.000Z' });
    // The next walk's first page starts the counts afresh; 2 and 3 are not returned.
    const [result] = writer.writeBatch([firstPage([1], null)]);
    expect(result?.result?.candidates?.map((candidate) => candidate.id)).toEqual([2, 3]);
    expect(cursorRow(sqlite, planId)).toMatchObject({ pages: 1, records: 1, lastId: 1, completedAt: null });
    // 2 moved to another day; 3 is listed in this window still: the walk missed it.
    const moved = on(2, '2026-03-02');
    const window = { planId, windowStart: DAY, windowEnd: DAY };
    const ledgerRow = (): unknown => sqlite.prepare('SELECT completed_at, records FROM sync_windows WHERE day = ?').get(DAY);
    const ledgerBefore = ledgerRow();
    const concluded = writer.conclude({ organization: 'acme', runId: runId(1), window, removedIds: [], found: [moved], complete: false, windowPages: 1, now: stamp() });
    expect(concluded).toEqual({ inserted: 0, updated: 1, rejected: 0, removed: 0 });
    expect(sqlite.prepare('SELECT blocked_at FROM threats WHERE id = 2').pluck().get()).toBe(moved.blockedAt);
    expect(sqlite.prepare('SELECT count(*) FROM organization_threats WHERE removed_at IS NOT NULL').pluck().get()).toBe(0);
    expect(cursorRow(sqlite, planId)).toEqual({ nextPage: null, pages: 0, records: 0, lastId: null, startedAt: null, completedAt: null });
    // The day keeps what the walk before vouched for: this one is not complete.
    expect(ledgerRow()).toEqual(ledgerBefore);
  });
});

describe('the page-writer thread', () => {
  /** A new mirror file with one plan and run, and the built writer thread on it (closed by the caller). */
  async function threadOnNewMirror(name: string): Promise<{ dbPath: string; sqlite: Database.Database; planId: number; run: number; worker: WriterClient }> {
    // The built thread (globalSetup compiles the project): the client loads writer-thread.js beside it.
    const { WriterClient } = (await import(join(import.meta.dirname, '..', 'dist', 'src', 'db', 'writer', 'writer-client.js'))) as typeof import('../src/db/writer/writer-client.js');
    const dbPath = join(tempDir(), name);
    opened = await openWritableMirror(dbPath);
    const { planId, runId } = setUp(opened.sqlite);
    const worker = new WriterClient({ dbPath, maxPageBytes: 4 * 2 ** 20, autoCheckpoint: true, now: new Date(stampMs).toISOString() });
    return { dbPath, sqlite: opened.sqlite, planId, run: runId(1), worker };
  }

  it('folds the WAL into the file while pages wait for their commit, so the close has less left to fold', async () => {
    const { dbPath, planId, run, worker } = await threadOnNewMirror('fold.db');
    const migratedBytes = statSync(dbPath).size;
    try {
      await worker.ready;
      // 2,500 threats in one commit: nothing waited yet, so nothing was folded (SQLite's own
      // checkpoint comes at ~40 MB of WAL), and the file is as the migrations left it.
      const first = Array.from({ length: 25 }, (_, index) => page(planId, run, DAY, range(index * 100 + 1, 100), String(index + 2)));
      await Promise.all(first.map((input) => worker.writePage(input)));
      expect(statSync(dbPath).size).toBe(migratedBytes);
      // The next page waits for others: the writer folds the 2,500 committed threats meanwhile.
      // A page that reaches the thread after its interval has passed (a loaded machine: a CI run
      // failed so) commits at once without waiting, so pages go one after another until one waits.
      let pages = 0;
      while (pages < 10 && statSync(dbPath).size <= migratedBytes + 500_000) {
        await worker.writePage(page(planId, run, DAY, range(2_501 + pages * 100, 100), String(27 + pages)));
        pages += 1;
      }
      expect(statSync(dbPath).size).toBeGreaterThan(migratedBytes + 500_000);
    } finally {
      await worker.close();
    }
  });

  it('ends between runs and starts again at the next call, its stamps still later than the last thread\'s, a call made while it ends included', async () => {
    const { sqlite, planId, run, worker } = await threadOnNewMirror('suspend.db');
    try {
      const first = page(planId, run, DAY, range(1, 100), '2');
      await worker.writePage(first);
      // Not awaited: the next page is handed over while the thread closes, and waits for the next one.
      const suspended = worker.suspend();
      const second = await worker.writePage({ ...page(planId, run, DAY, range(101, 100), '3'), now: first.now });
      await suspended;
      await worker.suspend();
      await worker.writePage({ ...page(planId, run, DAY, range(201, 100), 'last'), now: first.now });
      expect(second.inserted).toBe(100);
      // One stamp a page, each strictly later than the one before, though all three were sent at one instant.
      const stamps = sqlite.prepare('SELECT DISTINCT first_seen_at FROM organization_threats ORDER BY first_seen_at').pluck().all() as string[];
      expect(stamps).toHaveLength(3);
      expect(stamps[0]).toBe(first.now);
      expect(sqlite.prepare('SELECT count(*) FROM threats').pluck().get()).toBe(300);
    } finally {
      await worker.close();
    }
  });

  it('fails every waiting call and the client, once, with why, when a thread dies before it has started (found by the HTTP fuzzer: a stack overflow hid the cause)', async () => {
    const { planId, run, worker } = await threadOnNewMirror('dies-at-start.db');
    try {
      await worker.writePage(page(planId, run, DAY, range(1, 100), '2'));
      await worker.suspend();
      // The next thread this process starts is the writer's next one: ended before it can answer its start.
      const ended = new Promise<void>((resolve) => process.once('worker', (thread) => void thread.terminate().then(() => resolve())));
      const call = worker.writePage(page(planId, run, DAY, range(101, 100), '3'));
      await ended;
      // Its start was pending with the client's own failure as its reject: the failure called itself over the same calls, without end.
      await expect(call).rejects.toThrow(/the writer thread exited/);
      await expect(worker.failed).resolves.toMatchObject({ message: expect.stringMatching(/the writer thread exited/) });
    } finally {
      await worker.close();
    }
  });

  it("builds a first backfill's lookup indexes early once the writer has shown it waits on the service most of the time", async () => {
    const { sqlite, planId, run, worker } = await threadOnNewMirror('early.db');
    const hasContentIndex = (): boolean =>
      sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'threats_content'").get() !== undefined;
    try {
      // The mirror was empty: the thread deferred the lookup indexes.
      expect((await worker.ready).deferredIndexes).toBeGreaterThan(0);
      expect(hasContentIndex()).toBe(false);
      // A slow service: one page at a time, each waiting its commit interval (100 ms) for others
      // that never come. After a second of that, a wait is spent building the indexes.
      let pages = 0;
      while (pages < 40 && !hasContentIndex()) {
        await worker.writePage(page(planId, run, DAY, range(pages * 100 + 1, 100), String(pages + 2)));
        pages += 1;
      }
      expect(hasContentIndex()).toBe(true);
      expect(pages).toBeGreaterThanOrEqual(10);
      expect(deferredIndexes(sqlite)).toEqual([]);
      // Kept row by row from then on: the next page's threats are in the index.
      await worker.writePage(page(planId, run, DAY, range(9_001, 100), 'last'));
      const plan = sqlite.prepare("EXPLAIN QUERY PLAN SELECT id FROM threats WHERE content = 'https://t9050.example/'").all() as Array<{ detail: string }>;
      expect(plan.map((row) => row.detail).join(' ')).toContain('threats_content');
      expect(sqlite.prepare("SELECT id FROM threats WHERE content = 'https://t9050.example/'").pluck().get()).toBe(9_050);
    } finally {
      await worker.close();
    }
  });
});

function range(first: number, count: number): number[] {
  return Array.from({ length: count }, (_, index) => first + index);
}

