// The whole path, as a user runs it: the compiled CLI against the stand-in, into a real SQLite file.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats, type Standin, type StandinThreat } from '../src/standin/index.js';
import { runCli, startCli } from './support/cli.js';
import { mirroredThreats, runs, scalar, withDb, withWritableDb } from './support/mirror-db.js';
import { mirrorEnvFor, startTestStandin } from './support/service.js';
import { tempDbPath, tempDir } from './support/temp.js';

// Noon, so "today" cannot flip between the test and the CLI, whatever the hour the suite runs.
const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const ACME_KEY = 'acme-key-5f2b9c';
const GLOBEX_KEY = 'globex-key-77d1e0';
const USER_KEY = 'user-key-1a2b3c';

function start(threats: StandinThreat[]): Promise<Standin> {
  return startTestStandin({
    threats,
    keys: {
      organizationKeys: { [ACME_KEY]: 'acme', [GLOBEX_KEY]: 'globex' },
      userKeys: { [USER_KEY]: [{ organization: 'acme', active: true }, { organization: 'globex', active: false }] },
    },
    now: () => new Date(NOW),
  });
}

const SETTINGS = { THREAT_MIRROR_RETRY_MIN_MS: '5', THREAT_MIRROR_RETRY_MAX_MS: '50', LOG_LEVEL: 'info' };
const env = mirrorEnvFor({ acme: ACME_KEY, globex: GLOBEX_KEY }, NOW, SETTINGS);

/** What the service holds for a key between two days, as the mirror should hold it. */
function expected(service: Standin, key: string, from: string, to: string): Array<Pick<StandinThreat, 'id' | 'content' | 'type' | 'blockedAt'>> {
  return service
    .threatsVisibleTo(key)
    .filter((threat) => threat.blockedAt.slice(0, 10) >= from && threat.blockedAt.slice(0, 10) <= to)
    .map(({ id, content, type, blockedAt }) => ({ id, content, type, blockedAt }));
}

function dataset(count: number, days: number, seed = 7): StandinThreat[] {
  return generateThreats({ seed, organizations: ['acme', 'globex'], count, fromDay: addDays(TODAY, -(days - 1)), toDay: TODAY, hostile: true });
}

describe('backfill', () => {
  it('mirrors several thousand threats over many days exactly, hostile strings included', async () => {
    const service = await start(dataset(6000, 60));
    const dbPath = join(tempDir(), 'nested', 'mirror.db');
    const from = addDays(TODAY, -59);
    const result = await runCli(['--backfill', '--from', from], env(service, dbPath));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    for (const [organization, key] of [['acme', ACME_KEY], ['globex', GLOBEX_KEY]] as const) {
      const want = expected(service, key, from, TODAY);
      expect(want.length).toBeGreaterThan(1000);
      expect(mirroredThreats(dbPath, organization)).toEqual(want);
    }
    const hostile = withDb(dbPath, (db) => db.prepare("SELECT count(*) FROM threats WHERE content LIKE '%''%' OR length(content) > 5000 OR content GLOB '*[^ -~]*'").pluck().get() as number);
    expect(hostile).toBeGreaterThan(0);
    const summary = result.logs.filter((line) => line.msg === 'sync of organization "acme" succeeded');
    expect(summary).toHaveLength(1);
    expect(summary[0]).toMatchObject({ mode: 'backfill', inserted: expected(service, ACME_KEY, from, TODAY).length, updated: 0, rejected: 0 });
    // Pages of 100 and a few windows: close to one request per 100 threats.
    const requests = service.stats.requests.filter((request) => request.key === ACME_KEY).length;
    expect(requests).toBeLessThanOrEqual(Math.ceil(expected(service, ACME_KEY, from, TODAY).length / 100) + 8);
    expect(scalar(dbPath, 'PRAGMA integrity_check')).toBe('ok');
    expect(scalar(dbPath, "SELECT complete_through FROM sync_checkpoints WHERE organization = 'acme'")).toBe(addDays(TODAY, -1));
  });

  it('resumes after SIGKILL without re-fetching a committed page but the one before its cursor, re-read once to check the list did not shift', async () => {
    const service = await start(dataset(8000, 40, 11));
    service.setLatency(15);
    const dbPath = tempDbPath();
    const from = addDays(TODAY, -39);
    const args = ['--backfill', '--from', from, '--org', 'acme'];
    const first = startCli(args, env(service, dbPath, { LOG_LEVEL: 'debug', THREAT_MIRROR_CONCURRENCY: '2' }));
    await first.waitForLog((line) => line.msg === 'page committed' && first.logs.filter((l) => l.msg === 'page committed').length >= 8);
    first.kill('SIGKILL');
    const killed = await first.exited;
    expect(killed.signal).toBe('SIGKILL');
    const firstRequests = service.stats.requests.length;
    // Where each window stands: its next page is the first one not committed.
    const cursors = withDb(dbPath, (db) => db.prepare('SELECT window_start AS start, window_end AS end, next_page AS nextPage, completed_at AS done FROM sync_cursors').all()) as Array<{
      start: string;
      end: string;
      nextPage: string | null;
      done: string | null;
    }>;
    expect(cursors.length).toBeGreaterThan(0);
    const second = await runCli(args, env(service, dbPath));
    expect(second.code).toBe(0);
    const resumed = service.stats.requests.slice(firstRequests).map((request) => request.body as { startDate: string; endDate: string; next_page?: string });
    for (const cursor of cursors) {
      const forWindow = resumed.filter((body) => body.startDate === cursor.start && body.endDate === cursor.end);
      if (cursor.done !== null) {
        expect(forWindow).toEqual([]);
        continue;
      }
      const firstPage = Number(cursor.nextPage ?? '1');
      const earlier = forWindow.map((body) => Number(body.next_page ?? '1')).filter((page) => page < firstPage);
      // The one page before the cursor, read once, and nothing before it.
      expect(earlier).toEqual(firstPage > 1 ? [firstPage - 1] : []);
    }
    expect(mirroredThreats(dbPath, 'acme')).toEqual(expected(service, ACME_KEY, from, TODAY));
    const statuses = runs(dbPath).map((run) => run.status);
    expect(statuses).toEqual(['interrupted', 'succeeded']);
  });
});

describe('a write that fails', () => {
  it('fails the run without losing the page, and the next run completes the data exactly', async () => {
    const service = await start(dataset(4000, 30, 13));
    const dbPath = tempDbPath();
    const from = addDays(TODAY, -29);
    expect((await runCli(['--backfill', '--from', TODAY, '--org', 'acme'], env(service, dbPath))).code).toBe(0);
    const victim = expected(service, ACME_KEY, from, TODAY).find((threat) => threat.blockedAt.startsWith(addDays(TODAY, -15)));
    if (!victim) throw new Error('the dataset has no threat 15 days ago');
    // SQLite itself refuses one record, as a full disk or an I/O error would refuse a page.
    withWritableDb(dbPath, (db) => db.exec(`CREATE TRIGGER inject_fault BEFORE INSERT ON threats WHEN NEW.id = ${victim.id} BEGIN SELECT RAISE(ABORT, 'injected fault'); END`));
    const args = ['--backfill', '--from', from, '--org', 'acme'];
    const failed = await runCli(args, env(service, dbPath));
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('injected fault');
    expect(scalar(dbPath, 'SELECT count(*) FROM threats WHERE id = ?', victim.id)).toBe(0);

    withWritableDb(dbPath, (db) => db.exec('DROP TRIGGER inject_fault'));
    const resumed = await runCli(args, env(service, dbPath));
    expect(resumed.code).toBe(0);
    expect(mirroredThreats(dbPath, 'acme')).toEqual(expected(service, ACME_KEY, from, TODAY));
    expect(runs(dbPath).map((run) => run.status)).toEqual(['succeeded', 'failed', 'succeeded']);
    expect(scalar(dbPath, 'PRAGMA integrity_check')).toBe('ok');
  });
});

describe('incremental runs', () => {
  it('fetch the initial days first, then pick up new and late threats without duplicates', async () => {
    const service = await start(dataset(1500, 20, 3));
    const dbPath = tempDbPath();
    const settings = { THREAT_MIRROR_INITIAL_DAYS: '10', THREAT_MIRROR_LOOKBACK_DAYS: '2' };
    const first = await runCli(['--once'], env(service, dbPath, settings));
    expect(first.code).toBe(0);
    const initialFrom = addDays(TODAY, -9);
    expect(mirroredThreats(dbPath, 'acme')).toEqual(expected(service, ACME_KEY, initialFrom, TODAY));

    const maxId = Math.max(...service.threatsVisibleTo(USER_KEY).map((threat) => threat.id), ...service.threatsVisibleTo(GLOBEX_KEY).map((threat) => threat.id));
    service.addThreats([
      { id: maxId + 10, content: 'https://new-today.example/login', type: 'URL', blockedAt: `${TODAY}T11:00:00.000Z`, organization: 'acme' },
      { id: maxId + 11, content: 'late@arrival.example', type: 'EMAIL', blockedAt: `${addDays(TODAY, -2)}T03:00:00.000Z`, organization: 'acme' },
      { id: maxId + 12, content: 'too-late.example', type: 'URL', blockedAt: `${addDays(TODAY, -5)}T03:00:00.000Z`, organization: 'acme' },
    ]);
    const second = await runCli(['--once'], env(service, dbPath, settings));
    expect(second.code).toBe(0);
    const rescanFrom = addDays(TODAY, -2);
    // The re-scan covers the last two closed days and today: the late arrival 5 days back is out of reach.
    const rows = mirroredThreats(dbPath, 'acme');
    expect(rows.map((row) => row.id)).toContain(maxId + 10);
    expect(rows.map((row) => row.id)).toContain(maxId + 11);
    expect(rows.map((row) => row.id)).not.toContain(maxId + 12);
    expect(new Set(rows.map((row) => row.id)).size).toBe(rows.length);
    const lastRun = runs(dbPath).filter((run) => run.organization === 'acme').at(-1);
    expect(lastRun).toMatchObject({ status: 'succeeded', range_start: rescanFrom, range_end: TODAY, threats_inserted: 2, threats_updated: 0 });

    // Nothing new: a re-scan costs one request per 100 threats in range, at least one.
    const before = service.stats.requests.length;
    const third = await runCli(['--once', '--org', 'acme'], env(service, dbPath, settings));
    expect(third.code).toBe(0);
    const inRange = expected(service, ACME_KEY, rescanFrom, TODAY).length;
    expect(service.stats.requests.length - before).toBe(Math.max(1, Math.ceil(inRange / 100)));
    expect(runs(dbPath).at(-1)).toMatchObject({ threats_inserted: 0, threats_updated: 0 });
  });

  it('updates a threat whose fields changed, and only that one', async () => {
    const service = await start(dataset(300, 3, 5));
    const dbPath = tempDbPath();
    expect((await runCli(['--once', '--org', 'acme'], env(service, dbPath))).code).toBe(0);
    const target = expected(service, ACME_KEY, addDays(TODAY, -2), TODAY)[0];
    expect(target).toBeDefined();
    service.updateThreat(target?.id ?? 0, { content: `${target?.content}-changed` });
    expect((await runCli(['--once', '--org', 'acme'], env(service, dbPath))).code).toBe(0);
    expect(runs(dbPath).at(-1)).toMatchObject({ threats_inserted: 0, threats_updated: 1 });
    expect(mirroredThreats(dbPath, 'acme').find((row) => row.id === target?.id)?.content).toBe(`${target?.content}-changed`);
  });
});

describe('faults', () => {
  const faults = [
    { name: '500', fault: { kind: 'status', status: 500 } },
    { name: '503', fault: { kind: 'status', status: 503 } },
    { name: '408', fault: { kind: 'status', status: 408 } },
    { name: '429 with Retry-After', fault: { kind: 'rateLimit', retryAfter: '1' } },
    { name: '429 with Retry-After 0', fault: { kind: 'rateLimit', retryAfter: '0' } },
    { name: '429 with a negative Retry-After', fault: { kind: 'rateLimit', retryAfter: '-3' } },
    { name: 'a dropped connection', fault: { kind: 'drop' } },
    { name: 'truncated JSON', fault: { kind: 'truncate' } },
    { name: 'a slow response', fault: { kind: 'delay', ms: 200 } },
    { name: 'a hanging response', fault: { kind: 'hang' } },
    { name: 'an oversized body', fault: { kind: 'oversize', bytes: 300_000 } },
  ] as const;

  for (const { name, fault } of faults) {
    it(`survives ${name} with complete data`, async () => {
      const service = await start(dataset(900, 8, 13));
      const dbPath = tempDbPath();
      service.faults.enqueue(fault, { times: 2 });
      const from = addDays(TODAY, -7);
      const result = await runCli(
        ['--backfill', '--from', from, '--org', 'acme'],
        env(service, dbPath, { THREAT_MIRROR_REQUEST_TIMEOUT_MS: '1000', THREAT_MIRROR_MAX_RESPONSE_BYTES: '200000' }),
      );
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(mirroredThreats(dbPath, 'acme')).toEqual(expected(service, ACME_KEY, from, TODAY));
      if (fault.kind !== 'delay') expect(runs(dbPath).at(-1)?.retries).toBeGreaterThanOrEqual(2);
    });
  }

  it('keeps invalid records aside with the reason and goes on', async () => {
    const service = await start(dataset(900, 8, 17));
    const dbPath = tempDbPath();
    service.faults.enqueue({ kind: 'invalidRecords', count: 3 }, { times: 2 });
    const from = addDays(TODAY, -7);
    const result = await runCli(['--backfill', '--from', from, '--org', 'acme'], env(service, dbPath));
    expect(result.code).toBe(0);
    expect(mirroredThreats(dbPath, 'acme')).toEqual(expected(service, ACME_KEY, from, TODAY));
    const rejected = withDb(dbPath, (db) => db.prepare('SELECT organization, raw, reason, seen_at FROM rejected_records').all()) as Array<{ organization: string; raw: string; reason: string }>;
    expect(rejected).toHaveLength(6);
    for (const record of rejected) {
      expect(record.organization).toBe('acme');
      expect(record.reason).toMatch(/must be/);
      expect(() => JSON.parse(record.raw) as unknown).not.toThrow();
    }
    expect(runs(dbPath).at(-1)).toMatchObject({ status: 'succeeded', threats_rejected: 6 });
  });

  it('stops at a cursor that repeats instead of looping', async () => {
    const service = await start(dataset(900, 8, 19));
    const dbPath = tempDbPath();
    service.faults.enqueue({ kind: 'repeatCursor' }, { times: 50 });
    const result = await runCli(['--backfill', '--from', addDays(TODAY, -7), '--org', 'acme'], env(service, dbPath));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/organization "acme" failed: .*next_page .* again/);
  });
});

describe('large records', () => {
  /** 2,000 threats of 40,000 characters: pages of 4 MB, the default limit, 80 MB in all. */
  function largeThreats(): StandinThreat[] {
    return Array.from({ length: 2000 }, (_, index) => ({
      id: index + 1,
      content: `https://large-${index}.example/${String(index).repeat(40_000).slice(0, 40_000)}`,
      type: 'URL',
      blockedAt: `${addDays(TODAY, -(index % 14))}T10:00:00.000Z`,
      organization: 'acme',
    }));
  }

  it('are mirrored whole in pages up to the response limit, within the capped heap', async () => {
    const service = await start(largeThreats());
    const dbPath = tempDbPath();
    const from = addDays(TODAY, -13);
    const result = await runCli(['--backfill', '--from', from, '--org', 'acme'], env(service, dbPath));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const digest = (rows: Array<{ id: number; content: string }>) => rows.map((row) => `${row.id}:${row.content.length}:${row.content.slice(-12)}`);
    expect(digest(mirroredThreats(dbPath, 'acme'))).toEqual(digest(expected(service, ACME_KEY, from, TODAY)));
  });

  it('fail the organization with a message naming the limit when a page exceeds it', async () => {
    const service = await start(largeThreats());
    const dbPath = tempDbPath();
    const result = await runCli(
      ['--backfill', '--from', addDays(TODAY, -13), '--org', 'acme'],
      env(service, dbPath, { THREAT_MIRROR_MAX_RESPONSE_BYTES: '1000000', THREAT_MIRROR_MAX_RETRIES: '0' }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('response body exceeds 1000000 bytes (THREAT_MIRROR_MAX_RESPONSE_BYTES)');
  });
});

describe('unusual answers', () => {
  it('stores asset types outside the documented list as they come and logs each type once', async () => {
    const threats = generateThreats({ seed: 37, organizations: ['acme'], count: 800, fromDay: addDays(TODAY, -5), toDay: TODAY, unknownTypeShare: 0.1 });
    const service = await start(threats);
    const dbPath = tempDbPath();
    const result = await runCli(['--backfill', '--from', addDays(TODAY, -5), '--org', 'acme'], env(service, dbPath));
    expect(result.code).toBe(0);
    const unknown = [...new Set(threats.map((threat) => threat.type).filter((type) => type.startsWith('PLATFORM_9')))].sort();
    expect(unknown.length).toBeGreaterThan(1);
    expect(withDb(dbPath, (db) => db.prepare("SELECT DISTINCT type FROM threats WHERE type LIKE 'PLATFORM_9%' ORDER BY type").pluck().all())).toEqual(unknown);
    const warnings = result.logs.filter((line) => line.msg === 'asset type not in the documented list; stored as received').map((line) => line.type);
    expect(warnings.sort()).toEqual(unknown);
  });

  it('warns when the service reports nothing at all for an organization', async () => {
    const service = await start(generateThreats({ seed: 39, organizations: ['globex'], count: 100, fromDay: addDays(TODAY, -5), toDay: TODAY }));
    const dbPath = tempDbPath();
    const result = await runCli(['--once', '--org', 'acme'], env(service, dbPath));
    expect(result.code).toBe(0);
    expect(result.logs.find((line) => typeof line.msg === 'string' && line.msg.startsWith('the service returned no threats for this organization'))).toMatchObject({ organization: 'acme', level: 40 });
  });
});

describe('keys and arguments', () => {
  it('fails only the organization with a bad key, names it, and never prints the key', async () => {
    const service = await start(dataset(600, 5, 23));
    const dbPath = tempDbPath();
    const badKey = 'sk-live-DO-NOT-PRINT-1234567890';
    const result = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_API_KEY_ACME: badKey, LOG_LEVEL: 'trace' }));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/organization "acme" failed: .*API key is invalid or lacks permission \(HTTP 401\)/);
    expect(result.stdout + result.stderr).not.toContain(badKey);
    expect(result.stdout + result.stderr).not.toContain(GLOBEX_KEY);
    // No retries on 401: the windows that started together were each asked once, and nothing more.
    const refused = service.stats.requests.filter((request) => request.key === badKey);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.length).toBeLessThanOrEqual(4);
    expect(new Set(refused.map((request) => JSON.stringify(request.body))).size).toBe(refused.length);
    expect(mirroredThreats(dbPath, 'globex')).toEqual(expected(service, GLOBEX_KEY, addDays(TODAY, -29), TODAY));
    expect(mirroredThreats(dbPath, 'acme')).toEqual([]);
  });

  it('mirrors through a user key the threats of the organizations the user is active in', async () => {
    const service = await start(dataset(600, 5, 29));
    const dbPath = tempDbPath();
    const result = await runCli(['--once'], mirrorEnvFor(USER_KEY, NOW, SETTINGS)(service, dbPath, { THREAT_MIRROR_ORG: 'me' }));
    expect(result.code).toBe(0);
    const rows = mirroredThreats(dbPath, 'me');
    expect(rows).toEqual(expected(service, USER_KEY, addDays(TODAY, -29), TODAY));
    expect(rows.length).toBeGreaterThan(0);
  });

  it('warns when organizations share a key: each holds everything the key sees, so per-organization answers are not', async () => {
    const service = await start(dataset(300, 3, 31));
    const dbPath = tempDbPath();
    const result = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_API_KEY_ACME: USER_KEY, THREAT_MIRROR_API_KEY_GLOBEX: USER_KEY }));
    expect(result.code).toBe(0);
    const warning = result.logs.find((line) => typeof line.msg === 'string' && line.msg.startsWith('organizations acme, globex use the same API key'));
    expect(warning).toMatchObject({ level: 40, organizations: ['acme', 'globex'] });
    expect(result.stdout + result.stderr).not.toContain(USER_KEY);
    // What the warning says: both names hold the same rows, the key's whole view.
    expect(mirroredThreats(dbPath, 'globex')).toEqual(mirroredThreats(dbPath, 'acme'));
    expect(mirroredThreats(dbPath, 'acme')).toEqual(expected(service, USER_KEY, addDays(TODAY, -29), TODAY));
    // Keys of their own: no warning.
    const own = await runCli(['--once'], env(service, tempDbPath()));
    expect(own.logs.some((line) => typeof line.msg === 'string' && line.msg.includes('use the same API key'))).toBe(false);
  });

  it('exits 2 on bad configuration or arguments, naming the problem, and writes nothing', async () => {
    const dir = tempDir();
    const dbPath = join(dir, 'never.db');
    const base = { THREAT_MIRROR_API_URL: 'http://127.0.0.1:9', THREAT_MIRROR_API_KEY: 'k', THREAT_MIRROR_DB: dbPath };
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['--once'], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_API_KEY: 'k' }, /THREAT_MIRROR_API_URL: missing/],
      [['--backfill', '--from', '2024-13-01'], base, /--from: "2024-13-01" is not a valid date/],
      [['--backfill', '--from', '2024-05-02', '--to', '2024-05-01'], base, /--from 2024-05-02 is after --to 2024-05-01/],
      [['--once', '--verbose'], base, /unknown option --verbose/],
      [['--once', '--org', 'nobody'], base, /--org: "nobody" is not a configured organization/],
      [['--once'], { ...base, THREAT_MIRROR_CONCURRENCY: '0' }, /THREAT_MIRROR_CONCURRENCY: "0" must be at least 1/],
    ];
    for (const [args, environment, message] of cases) {
      const result = await runCli(args, environment);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
    }
    expect(existsSync(dbPath)).toBe(false);
  });
});
