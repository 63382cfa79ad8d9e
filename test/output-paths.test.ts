// Outputs never replace the live database: `export --out`, `snapshot --out`, THREAT_MIRROR_EXPORTS
// and THREAT_MIRROR_SNAPSHOT aimed at the database or a file beside it (its WAL, its index, its
// journal, the writer's lock), however the path is spelled, are refused with exit 2 naming the
// flag or variable; and an export's temporary file never follows a link planted at its name.
import { createHash } from 'node:crypto';
import { linkSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateThreats } from '../src/standin/index.js';
import { runCli, startCli } from './support/cli.js';
import { scalar } from './support/mirror-db.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDir } from './support/temp.js';

const KEY = 'acme-out-key';
const NOW = '2026-03-15T12:00:00.000Z';
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: '3' });
const threats = generateThreats({ seed: 12, organizations: ['acme'], count: 60, fromDay: '2026-03-13', toDay: '2026-03-15' });

const sha256Of = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('outputs aimed at the database', () => {
  it('export --out and snapshot --out refuse the database and the files beside it, however spelled; nothing is replaced', async () => {
    const service = await serveThreats(KEY, NOW, threats);
    const dir = tempDir();
    const dbPath = join(dir, 'mirror.db');
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    const before = sha256Of(dbPath);
    mkdirSync(join(dir, 'sub'));
    symlinkSync('mirror.db', join(dir, 'alias.db'));
    const linkedFolder = join(tempDir(), 'linked');
    symlinkSync(dir, linkedFolder);
    linkSync(dbPath, join(dir, 'hard-link.db'));
    const spellings: Array<[string, RegExp]> = [
      [dbPath, /is the database \(/],
      [relative(process.cwd(), dbPath), /is the database \(/],
      [join(dir, 'sub', '..', 'mirror.db'), /is the database \(/],
      [join(dir, 'alias.db'), /is the database \(/],
      [join(linkedFolder, 'mirror.db'), /is the database \(/],
      [join(dir, 'hard-link.db'), /is the database \(/],
      [join(linkedFolder, 'mirror.db-wal'), /is the database's write-ahead log/],
      [`${dbPath}-shm`, /is the database's WAL index/],
      [`${dbPath}-journal`, /is the database's rollback journal/],
      [join(dir, 'sub', '..', 'mirror.db.writer-lock'), /is the database's writer lock/],
    ];
    for (const [out, what] of spellings) {
      for (const args of [['export', '--format', 'hosts', '--out', out], ['snapshot', '--out', out]]) {
        const result = await runCli(args, { THREAT_MIRROR_DB: dbPath });
        expect({ args: args.join(' '), code: result.code }).toEqual({ args: args.join(' '), code: 2 });
        expect(result.stderr).toMatch(/^threat-mirror: --out: /);
        expect(result.stderr).toMatch(what);
      }
    }
    expect(sha256Of(dbPath)).toBe(before);
    expect(scalar(dbPath, 'PRAGMA integrity_check')).toBe('ok');
    expect((await runCli(['status'], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW })).code).toBe(0);
    // A file of its own in the same folder is written as before.
    expect((await runCli(['export', '--format', 'hosts', '--out', join(dir, 'hosts.txt')], { THREAT_MIRROR_DB: dbPath })).code).toBe(0);
  });

  it('THREAT_MIRROR_EXPORTS and THREAT_MIRROR_SNAPSHOT aimed at the database stop the start with exit 2 naming the variable', async () => {
    const service = await serveThreats(KEY, NOW, threats);
    const dir = tempDir();
    const dbPath = join(dir, 'mirror.db');
    const exportsAtDb = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_EXPORTS: `hosts=${join(dir, 'sub', '..', 'mirror.db')}` }));
    expect(exportsAtDb.code).toBe(2);
    expect(exportsAtDb.stderr).toMatch(/^threat-mirror: THREAT_MIRROR_EXPORTS: .* is the database \(/);
    const snapshotAtWal = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_SNAPSHOT: relative(process.cwd(), `${dbPath}-wal`) }));
    expect(snapshotAtWal.code).toBe(2);
    expect(snapshotAtWal.stderr).toMatch(/^threat-mirror: THREAT_MIRROR_SNAPSHOT: .* is the database's write-ahead log/);
    // The manifest written beside the snapshot counts too: FILE.json must not be the database.
    const jsonDb = join(dir, 'mirror.json');
    const manifestAtDb = await runCli(['--once'], env(service, jsonDb, { THREAT_MIRROR_SNAPSHOT: join(dir, 'mirror') }));
    expect(manifestAtDb.code).toBe(2);
    expect(manifestAtDb.stderr).toMatch(/THREAT_MIRROR_SNAPSHOT: .*mirror \(its \.json file beside it\) is the database/);
  });

  it("never follows a link planted at an export's temporary file name", async () => {
    const service = await serveThreats(KEY, NOW, threats);
    const dir = tempDir();
    const exportsDir = join(dir, 'exports');
    mkdirSync(exportsDir);
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'not to be overwritten\n');
    const hosts = join(exportsDir, 'hosts.txt');
    const daemon = startCli([], env(service, join(dir, 'mirror.db'), { THREAT_MIRROR_EXPORTS: `hosts=${hosts}`, THREAT_MIRROR_SCHEDULE: '0 0 1 1 *' }));
    // Planted before the process has even started node: its temporary file's name is .NAME.PID.tmp.
    symlinkSync(victim, join(exportsDir, `.hosts.txt.${daemon.child.pid}.tmp`));
    await daemon.waitForLog((line) => line.msg === 'export written' && line.path === hosts);
    daemon.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe('not to be overwritten\n');
    expect(lstatSync(hosts).isFile()).toBe(true);
    expect(readFileSync(hosts, 'utf8')).toMatch(/^# threat-mirror hosts file\n/);
  });
});
