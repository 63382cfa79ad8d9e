// `threat-mirror snapshot --out FILE` and THREAT_MIRROR_SNAPSHOT: a consistent, compacted copy that
// opens read-only anywhere, with a manifest whose checksum a reader can verify (issue 13).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats, type Standin } from '../src/standin/index.js';
import { runCli, servingPort, startCli } from './support/cli.js';
import { differingTables, withDb, withWritableDb } from './support/mirror-db.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { skipFor } from './support/judges.js';
import { tempDir } from './support/temp.js';
import { pagesServed, partialPages } from './support/whole-pages.js';
import { readAsUnprivilegedReader, shareFolder, unprivilegedReaderUnavailable } from './support/unprivileged-reader.js';

const KEY = 'acme-snapshot-key';
const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const unavailable = unprivilegedReaderUnavailable();

function startService(count: number): Promise<Standin> {
  return serveThreats(KEY, NOW, generateThreats({ seed: 83, organizations: ['acme'], count, fromDay: addDays(TODAY, -9), toDay: TODAY }));
}

const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: '10' });

interface Manifest {
  file: string;
  sha256: string;
  bytes: number;
  maxChangeSeq: number | null;
  organizations: Array<{ organization: string; completeThrough: string | null }>;
  createdAt: string;
}

const manifestOf = (snapshotPath: string): Manifest => JSON.parse(readFileSync(`${snapshotPath}.json`, 'utf8')) as Manifest;
const sha256Of = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('snapshot', () => {
  it('writes an equal, intact copy in DELETE mode with a manifest whose checksum matches', async () => {
    const service = await startService(900);
    const folder = tempDir();
    shareFolder(folder);
    const dbPath = join(folder, 'mirror.db');
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    const out = join(folder, 'snapshots', 'threat-mirror.db');

    const result = await runCli(['snapshot', '--out', out], { THREAT_MIRROR_DB: dbPath });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^snapshot .*threat-mirror\.db: \d+ bytes, sha256 [0-9a-f]{64}/);
    expect(differingTables(out, dbPath)).toEqual([]);
    expect(withDb(out, (db) => db.prepare('PRAGMA integrity_check').pluck().get())).toBe('ok');
    expect(withDb(out, (db) => db.pragma('journal_mode', { simple: true }))).toBe('delete');
    expect(existsSync(`${out}.partial`)).toBe(false);

    const manifest = manifestOf(out);
    expect(manifest.sha256).toBe(sha256Of(out));
    expect(manifest.bytes).toBe(readFileSync(out).length);
    expect(manifest.file).toBe('threat-mirror.db');
    expect(manifest.maxChangeSeq).toBe(withDb(dbPath, (db) => db.prepare('SELECT max(change_seq) FROM threats').pluck().get()));
    expect(manifest.organizations).toEqual(
      withDb(dbPath, (db) => db.prepare('SELECT organization, complete_through AS completeThrough FROM sync_checkpoints').all()),
    );
    expect(Date.parse(manifest.createdAt)).not.toBeNaN();

    // Under CI skipFor throws: the read-only-folder check never vanishes there.
    if (!skipFor(unavailable)) {
      shareFolder(join(folder, 'snapshots'));
      expect(await readAsUnprivilegedReader(out)).toMatchObject({ ok: true, threats: 900, links: 900, inserted: 900, quickCheck: 'ok', journalMode: 'delete' });
    }
  });

  it('says what is missing: no --out, no database', async () => {
    const missingOut = await runCli(['snapshot'], { THREAT_MIRROR_DB: join(tempDir(), 'none.db') });
    expect(missingOut.code).toBe(2);
    expect(missingOut.stderr).toMatch(/snapshot needs --out FILE/);
    const missingDb = await runCli(['snapshot', '--out', join(tempDir(), 's.db')], { THREAT_MIRROR_DB: join(tempDir(), 'none.db') });
    expect(missingDb.code).toBe(2);
    expect(missingDb.stderr).toMatch(/THREAT_MIRROR_DB: no database at/);
  });

  it('taken during a sync, holds whole pages only', async () => {
    const service = await startService(6000);
    service.setLatency(200);
    const folder = tempDir();
    const dbPath = join(folder, 'mirror.db');
    const running = startCli(['--backfill', '--from', addDays(TODAY, -9)], env(service, dbPath, { LOG_LEVEL: 'debug', THREAT_MIRROR_CONCURRENCY: '1' }));
    const writer = running;
    await writer.waitForLog(() => writer.logs.filter((line) => line.msg === 'page committed').length >= 3);
    const out = join(folder, 'during.db');
    expect((await runCli(['snapshot', '--out', out], { THREAT_MIRROR_DB: dbPath })).code).toBe(0);
    expect(writer.child.exitCode).toBeNull(); // still syncing when the snapshot finished
    const view = withDb(out, (db) => ({
      threats: db.prepare('SELECT count(*) FROM threats').pluck().get() as number,
      links: db.prepare('SELECT count(*) FROM organization_threats').pluck().get() as number,
      inserted: db.prepare('SELECT coalesce(sum(threats_inserted), 0) FROM sync_runs').pluck().get() as number,
      integrity: db.prepare('PRAGMA integrity_check').pluck().get(),
    }));
    expect(view.integrity).toBe('ok');
    expect(view.threats).toBeGreaterThan(0);
    expect(view.threats).toBeLessThan(6000);
    expect(view.links).toBe(view.threats);
    expect(view.inserted).toBe(view.threats);
    // Judged by the service's pages, not the program's counters: each is in the snapshot whole or not at all.
    const ids = withDb(out, (db) => db.prepare('SELECT id FROM threats').pluck().all() as number[]);
    expect(partialPages(new Set(ids), pagesServed(service))).toEqual([]);
    writer.kill('SIGTERM');
    expect((await writer.exited).code).toBe(0);
  });

  it('killed mid-way, leaves the previous snapshot and manifest intact', async () => {
    const service = await startService(300);
    const folder = tempDir();
    const dbPath = join(folder, 'mirror.db');
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    // Ballast the test adds so that copying takes long enough to be caught mid-way.
    withWritableDb(dbPath, (db) => {
      db.exec('CREATE TABLE test_ballast (b BLOB)');
      const insert = db.prepare('INSERT INTO test_ballast VALUES (randomblob(1048576))');
      for (let i = 0; i < 96; i += 1) insert.run();
    });
    const out = join(folder, 'threat-mirror.db');
    expect((await runCli(['snapshot', '--out', out], { THREAT_MIRROR_DB: dbPath })).code).toBe(0);
    const before = manifestOf(out);
    const manifestText = readFileSync(`${out}.json`, 'utf8');
    withWritableDb(dbPath, (db) => db.exec("UPDATE threats SET content = content || '#changed' WHERE id = (SELECT min(id) FROM threats)"));

    const running = startCli(['snapshot', '--out', out], { THREAT_MIRROR_DB: dbPath });
    const snapshotting = running;
    // Kill it once the partial copy exists: the copy is under way.
    await new Promise<void>((resolve, reject) => {
      const look = (): void => {
        if (existsSync(`${out}.partial`)) resolve();
        else if (snapshotting.child.exitCode !== null) reject(new Error('the snapshot finished before it could be killed; add ballast'));
        else setImmediate(look);
      };
      look();
    });
    snapshotting.kill('SIGKILL');
    expect((await snapshotting.exited).signal).toBe('SIGKILL');

    expect(sha256Of(out)).toBe(before.sha256);
    expect(readFileSync(`${out}.json`, 'utf8')).toBe(manifestText);
    expect(withDb(out, (db) => db.prepare('PRAGMA integrity_check').pluck().get())).toBe('ok');
    // The next snapshot clears what the killed one left and replaces both files.
    expect((await runCli(['snapshot', '--out', out], { THREAT_MIRROR_DB: dbPath })).code).toBe(0);
    expect(existsSync(`${out}.partial`)).toBe(false);
    expect(manifestOf(out).sha256).toBe(sha256Of(out));
    expect(manifestOf(out).sha256).not.toBe(before.sha256);
  });

  it('the daemon publishes one at THREAT_MIRROR_SNAPSHOT after a run that changed something', async () => {
    const service = await startService(200);
    const folder = tempDir();
    const dbPath = join(folder, 'mirror.db');
    const out = join(folder, 'published', 'threat-mirror.db');
    const running = startCli([], env(service, dbPath, { THREAT_MIRROR_SNAPSHOT: out, THREAT_MIRROR_SCHEDULE: '* * * * * *' }));
    const daemon = running;
    await daemon.waitForLog((line) => line.msg === 'snapshot published');
    const first = manifestOf(out);
    expect(first.sha256).toBe(sha256Of(out));
    service.addThreats([{ id: 9_100_000, content: 'https://snapshot-after.example', type: 'URL', blockedAt: `${TODAY}T11:30:00.000Z`, organization: 'acme' }]);
    await daemon.waitForLog((line) => line.msg === 'snapshot published' && line.maxChangeSeq !== first.maxChangeSeq);
    const second = manifestOf(out);
    expect(second.maxChangeSeq).toBeGreaterThan(first.maxChangeSeq ?? 0);
    expect(second.sha256).toBe(sha256Of(out));
    expect(withDb(out, (db) => db.prepare('SELECT count(*) FROM threats WHERE id = 9100000').pluck().get())).toBe(1);
    // Runs that change nothing publish nothing.
    const published = daemon.logs.filter((line) => line.msg === 'snapshot published').length;
    const runs = daemon.logs.filter((line) => line.status === 'succeeded').length;
    await daemon.waitForLog(() => daemon.logs.filter((line) => line.status === 'succeeded').length >= runs + 2);
    expect(daemon.logs.filter((line) => line.msg === 'snapshot published').length).toBe(published);
    daemon.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  });

  it('a snapshot that cannot be published is counted on /metrics and named for what it is: a file where its folder should be (issue 42 case 3)', async () => {
    const service = await startService(50);
    const folder = tempDir();
    const blocker = join(folder, 'published');
    writeFileSync(blocker, 'a file, not a folder\n');
    const daemon = startCli([], env(service, join(folder, 'mirror.db'), { THREAT_MIRROR_SNAPSHOT: join(blocker, 'threat-mirror.db'), THREAT_MIRROR_SCHEDULE: '0 0 1 1 *', THREAT_MIRROR_HTTP_PORT: '0' }));
    const port = await servingPort(daemon);
    const failed = await daemon.waitForLog((line) => String(line.msg).startsWith('snapshot not published'));
    expect(failed.msg).toBe(`snapshot not published, the previous one stays: cannot make the folder of ${join(blocker, 'threat-mirror.db')}: ${blocker} is a file, not a folder`);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/^threat_mirror_snapshot_failures_total 1$/m);
    expect(metrics).toMatch(/^threat_mirror_snapshot_last_publish_timestamp_seconds 0$/m);

    // Published, the time is its file's; a restart reads it from the file before its first run.
    const out = join(folder, 'ok', 'threat-mirror.db');
    await daemon.stop('SIGTERM');
    const publishing = startCli([], env(service, join(folder, 'mirror.db'), { THREAT_MIRROR_SNAPSHOT: out, THREAT_MIRROR_SCHEDULE: '0 0 1 1 *', THREAT_MIRROR_HTTP_PORT: '0' }));
    const publishingPort = await servingPort(publishing);
    await publishing.waitForLog((line) => line.msg === 'snapshot published');
    const publishedAt = `threat_mirror_snapshot_last_publish_timestamp_seconds ${statSync(out).mtimeMs / 1000}`;
    expect(await (await fetch(`http://127.0.0.1:${publishingPort}/metrics`)).text()).toContain(`\n${publishedAt}\n`);
    await publishing.stop('SIGTERM');
    const restarted = startCli([], env(service, join(folder, 'mirror.db'), { THREAT_MIRROR_SNAPSHOT: out, THREAT_MIRROR_SCHEDULE: '0 0 1 1 *', THREAT_MIRROR_HTTP_PORT: '0' }));
    const first = await (await fetch(`http://127.0.0.1:${await servingPort(restarted)}/metrics`)).text();
    expect(first).toContain(`\n${publishedAt}\n`);
    expect(first).toMatch(/^threat_mirror_snapshot_failures_total 0$/m);
  });
});
