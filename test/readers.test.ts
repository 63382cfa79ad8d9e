// What readers rely on: lookup columns, the change feed, removals, full-text search, lookup, verify.
import { join } from 'node:path';
import { Database } from '../src/db/sqlite.js';
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats, type Standin, type StandinThreat } from '../src/standin/index.js';
import { runCli } from './support/cli.js';
import { mirroredThreats, scalar, withDb, withWritableDb } from './support/mirror-db.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath, tempDir } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEY = 'acme-key';

const start = (threats: StandinThreat[]): Promise<Standin> => serveThreats(KEY, NOW, threats);
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: '10', THREAT_MIRROR_LOOKBACK_DAYS: '2' });

const threat = (id: number, content: string, type: string, day: string, time = '10:00:00.000'): StandinThreat => ({ id, content, type, blockedAt: `${day}T${time}Z`, organization: 'acme' });

/** A reader of the change feed: remembers the last change_seq it saw. */
function feedReader(dbPath: string): () => number[] {
  let last = 0;
  return () =>
    withDb(dbPath, (db) => {
      const rows = db.prepare('SELECT id, change_seq FROM threats WHERE change_seq > ? ORDER BY change_seq').all(last) as Array<{ id: number; change_seq: number }>;
      if (rows.length > 0) last = rows.at(-1)?.change_seq ?? last;
      return rows.map((row) => row.id);
    });
}

describe('lookup columns and text search', () => {
  it('are derived at the next start for rows written before they existed, each given a place in the feed', async () => {
    const service = await start([
      threat(1, 'https://Evil.Example.com/login', 'URL', TODAY),
      threat(2, 'Boss@Corp-Phish.example', 'EMAIL', TODAY),
    ]);
    const dbPath = tempDbPath();
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    // What a file written by a version without lookup columns looks like after the migration.
    withWritableDb(dbPath, (db) => db.exec('UPDATE threats SET change_seq = 0, host = NULL, registrable_domain = NULL, email = NULL, email_domain = NULL, url_expression = NULL'));
    const second = await runCli(['--once'], env(service, dbPath));
    expect(second.code).toBe(0);
    expect(second.logs.find((line) => String(line.msg).startsWith('derived lookup columns'))?.threats).toBe(2);
    const rows = withDb(dbPath, (reader) => reader.prepare('SELECT id, host, registrable_domain, email, email_domain, url_expression, change_seq FROM threats ORDER BY id').all());
    expect(rows).toEqual([
      { id: 1, host: 'evil.example.com', registrable_domain: 'example.com', email: null, email_domain: null, url_expression: 'evil.example.com/login', change_seq: expect.any(Number) },
      { id: 2, host: null, registrable_domain: null, email: 'boss@corp-phish.example', email_domain: 'corp-phish.example', url_expression: null, change_seq: expect.any(Number) },
    ]);
    // Each row has its own place in the feed, one after the other, and the re-scan that followed moved nothing again.
    const places = rows.map((row) => (row as { change_seq: number }).change_seq).sort((a, b) => a - b);
    expect(places[1]).toBe((places[0] as number) + 1);
  });

  it('are derived on write, indexed, and kept in step on update', async () => {
    const service = await start([
      threat(1, 'https://Login.Wallet-Verify.Example-Phish.co.uk/connect', 'URL', TODAY),
      threat(2, 'eip155:1:0xAbCdEf0123456789abcdef0123456789ABCDEF01', 'ADDRESS', TODAY),
      threat(3, 'eip155:137:0xabcdef0123456789abcdef0123456789abcdef01', 'ADDRESS', TODAY),
      threat(4, 'Support@Example-Phish.co.uk', 'EMAIL', TODAY),
      threat(5, 'not a url at all', 'URL', TODAY),
      threat(6, "zebrawallet'; DROP TABLE threats; --", 'PLATFORM_02', TODAY),
    ]);
    const dbPath = tempDbPath();
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    const rows = withDb(dbPath, (db) => db.prepare('SELECT id, host, registrable_domain, address_namespace, address_chain, address, email, email_domain FROM threats ORDER BY id').all());
    expect(rows).toEqual([
      { id: 1, host: 'login.wallet-verify.example-phish.co.uk', registrable_domain: 'example-phish.co.uk', address_namespace: null, address_chain: null, address: null, email: null, email_domain: null },
      { id: 2, host: null, registrable_domain: null, address_namespace: 'eip155', address_chain: '1', address: '0xabcdef0123456789abcdef0123456789abcdef01', email: null, email_domain: null },
      { id: 3, host: null, registrable_domain: null, address_namespace: 'eip155', address_chain: '137', address: '0xabcdef0123456789abcdef0123456789abcdef01', email: null, email_domain: null },
      { id: 4, host: null, registrable_domain: null, address_namespace: null, address_chain: null, address: null, email: 'support@example-phish.co.uk', email_domain: 'example-phish.co.uk' },
      { id: 5, host: null, registrable_domain: null, address_namespace: null, address_chain: null, address: null, email: null, email_domain: null },
      { id: 6, host: null, registrable_domain: null, address_namespace: null, address_chain: null, address: null, email: null, email_domain: null },
    ]);
    const expressions = withDb(dbPath, (db) => db.prepare('SELECT id, url_expression FROM threats WHERE url_expression IS NOT NULL ORDER BY id').all());
    expect(expressions).toEqual([{ id: 1, url_expression: 'login.wallet-verify.example-phish.co.uk/connect' }]);
    withDb(dbPath, (db) => {
      const plan = (sql: string) => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((row) => row.detail).join(' ');
      expect(plan("SELECT id FROM threats WHERE content = 'x'")).toMatch(/USING (COVERING )?INDEX threats_content/);
      expect(plan("SELECT id FROM threats WHERE host = 'x'")).toMatch(/USING (COVERING )?INDEX threats_host/);
      expect(plan("SELECT id FROM threats WHERE address = 'x'")).toMatch(/USING (COVERING )?INDEX threats_address/);
      expect(plan("SELECT id FROM threats WHERE url_expression IN ('a/', 'b/')")).toMatch(/USING (COVERING )?INDEX threats_url_expression/);
      expect(plan('SELECT id FROM threats WHERE change_seq > 5')).toMatch(/USING (COVERING )?INDEX threats_change_seq/);
      const match = (query: string) => db.prepare('SELECT rowid FROM threats_fts WHERE threats_fts MATCH ? ORDER BY rowid').pluck().all(query);
      expect(match('wallet')).toEqual([1]);
      expect(match('zebrawallet')).toEqual([6]);
    });
    service.updateThreat(6, { content: 'nothing to see' });
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    withDb(dbPath, (db) => {
      expect(db.prepare("SELECT rowid FROM threats_fts WHERE threats_fts MATCH 'zebrawallet'").all()).toEqual([]);
      expect(db.prepare("SELECT rowid FROM threats_fts WHERE threats_fts MATCH 'nothing'").pluck().all()).toEqual([6]);
    });
  });
});

describe('change feed and removals', () => {
  it('give a reader exactly what is new, changed, removed or restored after each of many syncs', async () => {
    const base = generateThreats({ seed: 8, organizations: ['acme'], count: 600, fromDay: addDays(TODAY, -9), toDay: TODAY });
    const service = await start(base);
    const dbPath = tempDbPath();
    const read = feedReader(dbPath);
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    const first = read();
    expect(new Set(first)).toEqual(new Set(base.map((t) => t.id)));
    expect(first).toHaveLength(base.length);
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    expect(read()).toEqual([]);

    const recent = (offset: number) => base.filter((t) => t.blockedAt.slice(0, 10) === addDays(TODAY, -offset));
    let nextId = 1_000_000;
    const seen = new Set<number>(first);
    const rounds = 6;
    for (let round = 0; round < rounds; round += 1) {
      const added = [threat(nextId++, `https://round-${round}.example`, 'URL', TODAY), threat(nextId++, `late-${round}@example.com`, 'EMAIL', addDays(TODAY, -1))];
      service.addThreats(added);
      const changed = recent(round % 3)[round];
      if (changed) service.updateThreat(changed.id, { content: `${changed.content}#r${round}` });
      const removed = recent(2)[round + 10];
      if (removed) service.removeThreats([removed.id]);
      const restored = round > 0 ? recent(2)[round + 9] : undefined;
      if (restored) service.addThreats([restored]);
      expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
      const delta = read();
      expect(new Set(delta).size).toBe(delta.length);
      const expectedIds = new Set([...added.map((t) => t.id), ...(changed ? [changed.id] : []), ...(removed ? [removed.id] : []), ...(restored ? [restored.id] : [])]);
      expect(new Set(delta)).toEqual(expectedIds);
      for (const id of delta) seen.add(id);
    }
    // Every row the reader holds came through the feed.
    const all = withDb(dbPath, (db) => db.prepare('SELECT id FROM threats').pluck().all() as number[]);
    for (const id of all) expect(seen.has(id)).toBe(true);
    // After the last round the mirror's current view equals the service, removals included.
    const current = withDb(dbPath, (db) => db.prepare("SELECT id FROM current_threats WHERE organization = 'acme' ORDER BY id").pluck().all());
    const want = service.threatsVisibleTo(KEY).filter((t) => t.blockedAt.slice(0, 10) >= addDays(TODAY, -9)).map((t) => t.id);
    expect(current).toEqual(want);
  });

  it('never give a number twice: a reader keeping its place sees every change of a mirror built anew, or restored from a copy that lags', async () => {
    const base = generateThreats({ seed: 9, organizations: ['acme'], count: 300, fromDay: addDays(TODAY, -9), toDay: TODAY });
    const service = await start(base);
    const later = (hours: number): string => new Date(Date.parse(NOW) + hours * 3_600_000).toISOString();
    const envAt = (hours: number) => mirrorEnvFor(KEY, later(hours), { THREAT_MIRROR_INITIAL_DAYS: '10', THREAT_MIRROR_LOOKBACK_DAYS: '2' });
    const maxSeq = (dbPath: string): number => scalar<number>(dbPath, 'SELECT max(change_seq) FROM threats');
    const primary = tempDbPath();
    expect((await runCli(['--once'], env(service, primary))).code).toBe(0);
    // The replica a new pod would restore: the file as it was (a Litestream replica lags its primary the same way).
    const replica = join(tempDir(), 'replica.db');
    expect((await runCli(['snapshot', '--out', replica], { THREAT_MIRROR_DB: primary })).code).toBe(0);
    // A snapshot is the same lineage: its readers follow one feed (docs/schema.md, feed_id).
    const feedId = "SELECT value FROM mirror_settings WHERE key = 'feed_id'";
    expect(scalar<string>(replica, feedId)).toBe(scalar<string>(primary, feedId));
    // The primary goes on: a threat blocked, one unblocked; the reader reads them.
    const added = threat(2_000_000, 'https://after-the-copy.example/', 'URL', TODAY);
    const unblocked = base.find((t) => t.blockedAt.startsWith(TODAY)) as StandinThreat;
    service.addThreats([added]);
    service.removeThreats([unblocked.id]);
    expect((await runCli(['--once'], envAt(1)(service, primary))).code).toBe(0);
    const last = maxSeq(primary);
    const changed = (dbPath: string): number[] => withDb(dbPath, (db) => db.prepare('SELECT id FROM threats WHERE change_seq > ? ORDER BY id').pluck().all(last) as number[]);
    expect(changed(primary)).toEqual([]);
    // A pod restored from the replica makes the same changes again: the reader, at `last`, sees each of them.
    expect((await runCli(['--once'], envAt(2)(service, replica))).code).toBe(0);
    expect(changed(replica)).toEqual([unblocked.id, added.id].sort((a, b) => a - b));
    // A pod built anew walks the history again: every row is after the reader's place.
    const rebuilt = tempDbPath();
    expect((await runCli(['--once'], envAt(3)(service, rebuilt))).code).toBe(0);
    expect(changed(rebuilt)).toHaveLength(scalar<number>(rebuilt, 'SELECT count(*) FROM threats'));
  });

  it('stay exact whatever the clock: one past 2255 (THREAT_MIRROR_NOW, or a system clock set wrong) still never gives a number twice', async () => {
    const far = '9999-06-01T12:00:00.000Z';
    const day = far.slice(0, 10);
    const service = await serveThreats(KEY, far, [threat(1, 'https://far-one.example/', 'URL', day), threat(2, 'https://far-two.example/', 'URL', day)]);
    const dbPath = tempDbPath();
    const farEnv = mirrorEnvFor(KEY, far, { THREAT_MIRROR_INITIAL_DAYS: '2' });
    expect((await runCli(['--once'], farEnv(service, dbPath))).code).toBe(0);
    const last = scalar<number>(dbPath, 'SELECT max(change_seq) FROM threats');
    service.addThreats([threat(3, 'https://far-three.example/', 'URL', day)]);
    service.updateThreat(1, { content: 'https://far-one.example/changed' });
    expect((await runCli(['--once'], farEnv(service, dbPath))).code).toBe(0);
    const places = withDb(dbPath, (db) => db.prepare('SELECT change_seq FROM threats').pluck().all() as number[]);
    expect(places.every((place) => Number.isSafeInteger(place))).toBe(true);
    expect(new Set(places).size).toBe(3);
    expect(withDb(dbPath, (db) => db.prepare('SELECT id FROM threats WHERE change_seq > ? ORDER BY id').pluck().all(last))).toEqual([1, 3]);
  });

  it('marks a threat removed only where its day was fully re-scanned, and clears the mark when it returns', async () => {
    const inRange = threat(10, 'https://in-range.example', 'URL', addDays(TODAY, -1));
    const outOfRange = threat(11, 'https://out-of-range.example', 'URL', addDays(TODAY, -6));
    const service = await start([inRange, outOfRange, threat(12, 'https://stays.example', 'URL', addDays(TODAY, -1))]);
    const dbPath = tempDbPath();
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    service.removeThreats([10, 11]);
    const result = await runCli(['--once'], env(service, dbPath));
    expect(result.code).toBe(0);
    const removedAt = (id: number) => scalar<string | null>(dbPath, "SELECT removed_at FROM organization_threats WHERE organization = 'acme' AND threat_id = ?", id);
    expect(removedAt(10)).not.toBeNull();
    expect(removedAt(11)).toBeNull();
    expect(removedAt(12)).toBeNull();
    expect(result.logs.find((line) => line.msg === 'sync of organization "acme" succeeded')).toMatchObject({ removed: 1 });
    // Never deleted: the row stays, out of current_threats.
    expect(mirroredThreats(dbPath, 'acme').map((row) => row.id)).toEqual([10, 11, 12]);
    expect(scalar(dbPath, 'SELECT count(*) FROM current_threats WHERE id = 10')).toBe(0);
    service.addThreats([inRange]);
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    expect(removedAt(10)).toBeNull();
  });
});

describe('lookup command', () => {
  it('matches URLs by expression, addresses and e-mails by their columns, with exit 0 on a match and 1 on none', async () => {
    const service = await start([
      threat(1, 'https://login.evil-phish.example/connect', 'URL', TODAY),
      threat(2, 'eip155:1:0xAbCdEf0123456789abcdef0123456789ABCDEF01', 'ADDRESS', TODAY),
      threat(3, 'Support@Evil-Phish.example', 'EMAIL', TODAY),
    ]);
    const dbPath = tempDbPath();
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    const reader = { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW };
    type Json = { results: Array<{ value: string; blocked: boolean; matches: Array<{ id: number; match: { by: string } }>; same_host: Array<{ id: number }> }> };
    const json = async (...values: string[]) => {
      const result = await runCli(['lookup', '--json', ...values], reader);
      return { code: result.code, results: (JSON.parse(result.stdout) as Json).results };
    };
    // Issue 17 changed this: another path on the threat's host is not blocked (it was "by host"); the
    // path-level threat shows only as same-host context.
    const otherPath = await json('https://LOGIN.evil-phish.example/other-path');
    expect(otherPath.code).toBe(1);
    expect(otherPath.results[0]).toMatchObject({ blocked: false, matches: [], same_host: [{ id: 1 }] });
    const variant = await json('HTTPS://Login.Evil-Phish.Example.:443/a/../connect/#top');
    expect(variant.code).toBe(0);
    expect(variant.results[0]?.matches).toMatchObject([{ id: 1, match: { by: 'expression', expression: 'login.evil-phish.example/connect' } }]);
    // Nor does a bare domain match a path-level threat or an e-mail at that domain (it did, by registrable domain).
    expect((await json('evil-phish.example')).results[0]).toMatchObject({ blocked: false, matches: [] });
    expect((await json('0xABCDEF0123456789ABCDEF0123456789ABCDEF01')).results[0]?.matches).toMatchObject([{ id: 2, match: { by: 'address' } }]);
    expect((await json('eip155:137:0xabcdef0123456789abcdef0123456789abcdef01')).results[0]?.matches).toEqual([]);
    expect((await json('SUPPORT@evil-phish.example')).results[0]?.matches).toMatchObject([{ id: 3, match: { by: 'email' } }]);
    const none = await runCli(['lookup', 'https://innocent.example/'], reader);
    expect(none.code).toBe(1);
    expect(none.stdout).toMatch(/not blocked/);
    const text = await runCli(['lookup', 'https://login.evil-phish.example/connect', 'innocent.example'], reader);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^https:\/\/login\.evil-phish\.example\/connect: blocked \(1 match\)/);
    expect(text.stdout).toMatch(/\(by exact\)/);
    expect((await runCli(['lookup'], reader)).code).toBe(2);
    expect((await runCli(['lookup', 'x'], { THREAT_MIRROR_DB: join(tempDir(), 'missing.db') })).code).toBe(2);
  });
});

describe('verify', () => {
  it('finds drift injected into closed days, reports it as a table, and repairs it', async () => {
    const service = await start(generateThreats({ seed: 12, organizations: ['acme'], count: 800, fromDay: addDays(TODAY, -9), toDay: TODAY }));
    const dbPath = tempDbPath();
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    const dayOf = (offset: number) => addDays(TODAY, -offset);
    const onDay = (offset: number) => service.threatsVisibleTo(KEY).filter((t) => t.blockedAt.slice(0, 10) === dayOf(offset));
    // Closed days older than the re-scan (3 and more days back) that hold threats.
    const offsets = [9, 8, 7, 6, 5, 4, 3].filter((offset) => onDay(offset).length > 0);
    expect(offsets.length).toBeGreaterThanOrEqual(4);
    const [deletedDay, alteredDay, goneDay, ledgerDay] = offsets as [number, number, number, number];
    const [deleted] = onDay(deletedDay);
    const [altered] = onDay(alteredDay);
    const [gone] = onDay(goneDay);
    // Drift by hand in the file, and an unblocking at the service on a day the re-scan no longer reaches.
    const db = new Database(dbPath);
    db.prepare('DELETE FROM organization_threats WHERE threat_id = ?').run(deleted?.id);
    db.prepare('DELETE FROM threats WHERE id = ?').run(deleted?.id);
    db.prepare("UPDATE threats SET content = 'tampered' WHERE id = ?").run(altered?.id);
    db.prepare("UPDATE sync_windows SET content_hash = '0000000000000000' WHERE day = ?").run(dayOf(ledgerDay));
    db.close();
    service.removeThreats([gone?.id ?? 0]);

    const result = await runCli(['verify', '--from', dayOf(9), '--to', dayOf(1)], env(service, dbPath));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/acme: 9 days .* checked, 4 drifted/);
    for (const offset of [deletedDay, alteredDay, goneDay, ledgerDay]) expect(result.stdout).toMatch(new RegExp(`${dayOf(offset)} .* repaired`));
    const want = service.threatsVisibleTo(KEY).filter((t) => t.blockedAt.slice(0, 10) >= dayOf(9) && t.blockedAt.slice(0, 10) <= dayOf(1)).map((t) => t.id);
    const current = withDb(dbPath, (reader) =>
      reader.prepare("SELECT id FROM current_threats WHERE organization = 'acme' AND blocked_at < ? ORDER BY id").pluck().all(`${TODAY}`),
    );
    expect(current).toEqual(want);
    const again = await runCli(['verify', '--from', dayOf(9), '--to', dayOf(1)], env(service, dbPath));
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/9 days .* checked, 0 drifted/);
    expect((await runCli(['verify', '--to', TODAY], env(service, dbPath))).code).toBe(2);
  });
});
