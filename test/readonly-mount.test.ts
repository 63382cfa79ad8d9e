// A reader on a read-only mount of the volume (`readonly: true`, a folder it cannot write) opens
// the file and reads a consistent mirror however the writer stopped: cleanly, killed between
// runs, or killed mid-sync (issue 11, item 5).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats, type Standin } from '../src/standin/index.js';
import { runCli, startCli } from './support/cli.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { skipFor } from './support/judges.js';
import { tempDir } from './support/temp.js';
import { pagesServed, partialPages } from './support/whole-pages.js';
import { readAsUnprivilegedReader, shareFolder, unprivilegedReaderUnavailable } from './support/unprivileged-reader.js';

const KEY = 'acme-readonly-key';
const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);

function startService(count: number): Promise<Standin> {
  return serveThreats(KEY, NOW, generateThreats({ seed: 57, organizations: ['acme'], count, fromDay: addDays(TODAY, -9), toDay: TODAY }));
}

const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: '10' });

function sharedDbPath(): string {
  const folder = tempDir();
  shareFolder(folder);
  return join(folder, 'mirror.db');
}

describe.skipIf(skipFor(unprivilegedReaderUnavailable()))('a readonly reader that cannot write the folder', () => {
  it('opens the file after a clean stop, and while the next writer runs', async () => {
    const service = await startService(600);
    const dbPath = sharedDbPath();
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);

    const afterStop = await readAsUnprivilegedReader(dbPath);
    expect(afterStop).toMatchObject({ ok: true, threats: 600, links: 600, inserted: 600, quickCheck: 'ok' });
    // What a root reader would not show: the reader really ran without write access.
    if (process.getuid?.() === 0) expect(afterStop.uid).toBe(65534);

    const writer = startCli([], env(service, dbPath, { THREAT_MIRROR_SCHEDULE: '* * * * * *' }));
    await writer.waitForLog((line) => line.status === 'succeeded');
    expect(await readAsUnprivilegedReader(dbPath)).toMatchObject({ ok: true, threats: 600, quickCheck: 'ok', journalMode: 'wal' });
    writer.kill('SIGTERM');
    expect((await writer.exited).code).toBe(0);
    expect(await readAsUnprivilegedReader(dbPath)).toMatchObject({ ok: true, threats: 600, quickCheck: 'ok' });
  });

  it('opens the file after the writer was killed between runs', async () => {
    const service = await startService(300);
    const dbPath = sharedDbPath();
    const writer = startCli([], env(service, dbPath, { THREAT_MIRROR_SCHEDULE: '0 0 1 1 *' }));
    await writer.waitForLog((line) => line.status === 'succeeded');
    writer.kill('SIGKILL');
    expect((await writer.exited).signal).toBe('SIGKILL');
    expect(await readAsUnprivilegedReader(dbPath)).toMatchObject({ ok: true, threats: 300, links: 300, inserted: 300, quickCheck: 'ok' });
  });

  it('opens the file after the writer was killed mid-sync, and sees whole pages only', async () => {
    const service = await startService(3000);
    service.setLatency(40);
    const dbPath = sharedDbPath();
    const writer = startCli(['--backfill', '--from', addDays(TODAY, -9)], env(service, dbPath, { LOG_LEVEL: 'debug', THREAT_MIRROR_CONCURRENCY: '2' }));
    const running = writer;
    await running.waitForLog(() => running.logs.filter((line) => line.msg === 'page committed').length >= 4);
    writer.kill('SIGKILL');
    expect((await writer.exited).signal).toBe('SIGKILL');
    const view = await readAsUnprivilegedReader(dbPath);
    expect(view).toMatchObject({ ok: true, quickCheck: 'ok' });
    expect(view.threats).toBeGreaterThan(0);
    expect(view.threats).toBeLessThan(3000);
    expect(view.links).toBe(view.threats);
    expect(view.inserted).toBe(view.threats);
    // Judged by the service's pages, not the program's counters: each is in the file whole or not at all.
    expect(view.ids).toHaveLength(view.threats ?? -1);
    expect(partialPages(new Set(view.ids), pagesServed(service))).toEqual([]);
  });
});
