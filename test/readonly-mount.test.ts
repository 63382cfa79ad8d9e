// A reader on a read-only mount of the volume (`readonly: true`, a folder it cannot write) opens
// the file and reads a consistent mirror however the writer stopped: cleanly, killed between
// runs, or killed mid-sync (issue 11, item 5).
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats, type Standin, startStandin } from '../src/standin/index.js';
import { type CliProcess, runCli, startCli } from './support/cli.js';
import { tempDir } from './support/temp.js';
import { readAsUnprivilegedReader, shareFolder, unprivilegedReaderUnavailable } from './support/unprivileged-reader.js';

const KEY = 'acme-readonly-key';
const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const unavailable = unprivilegedReaderUnavailable();
if (unavailable) console.warn(`readonly-mount tests skipped: ${unavailable}`);

let standin: Standin | undefined;
let writer: CliProcess | undefined;
afterEach(async () => {
  if (writer && writer.child.exitCode === null && writer.child.signalCode === null) {
    writer.kill('SIGKILL');
    await writer.exited;
  }
  writer = undefined;
  await standin?.close();
  standin = undefined;
});

async function startService(count: number): Promise<Standin> {
  standin = await startStandin({
    threats: generateThreats({ seed: 57, organizations: ['acme'], count, fromDay: addDays(TODAY, -9), toDay: TODAY }),
    keys: { organizationKeys: { [KEY]: 'acme' }, userKeys: {} },
    now: () => new Date(NOW),
  });
  return standin;
}

function env(service: Standin, dbPath: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    THREAT_MIRROR_API_URL: service.url,
    THREAT_MIRROR_DB: dbPath,
    THREAT_MIRROR_ORG: 'acme',
    THREAT_MIRROR_API_KEY: KEY,
    THREAT_MIRROR_INITIAL_DAYS: '10',
    THREAT_MIRROR_NOW: NOW,
    ...extra,
  };
}

function sharedDbPath(): string {
  const folder = tempDir();
  shareFolder(folder);
  return join(folder, 'mirror.db');
}

describe.skipIf(unavailable !== undefined)('a readonly reader that cannot write the folder', () => {
  it('opens the file after a clean stop, and while the next writer runs', async () => {
    const service = await startService(600);
    const dbPath = sharedDbPath();
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);

    const afterStop = await readAsUnprivilegedReader(dbPath);
    expect(afterStop).toMatchObject({ ok: true, threats: 600, links: 600, inserted: 600, quickCheck: 'ok' });
    // What a root reader would not show: the reader really ran without write access.
    if (process.getuid?.() === 0) expect(afterStop.uid).toBe(65534);

    writer = startCli([], env(service, dbPath, { THREAT_MIRROR_SCHEDULE: '* * * * * *' }));
    await writer.waitForLog((line) => line.status === 'succeeded');
    expect(await readAsUnprivilegedReader(dbPath)).toMatchObject({ ok: true, threats: 600, quickCheck: 'ok', journalMode: 'wal' });
    writer.kill('SIGTERM');
    expect((await writer.exited).code).toBe(0);
    expect(await readAsUnprivilegedReader(dbPath)).toMatchObject({ ok: true, threats: 600, quickCheck: 'ok' });
  });

  it('opens the file after the writer was killed between runs', async () => {
    const service = await startService(300);
    const dbPath = sharedDbPath();
    writer = startCli([], env(service, dbPath, { THREAT_MIRROR_SCHEDULE: '0 0 1 1 *' }));
    await writer.waitForLog((line) => line.status === 'succeeded');
    writer.kill('SIGKILL');
    expect((await writer.exited).signal).toBe('SIGKILL');
    expect(await readAsUnprivilegedReader(dbPath)).toMatchObject({ ok: true, threats: 300, links: 300, inserted: 300, quickCheck: 'ok' });
  });

  it('opens the file after the writer was killed mid-sync, and sees whole pages only', async () => {
    const service = await startService(3000);
    service.setLatency(40);
    const dbPath = sharedDbPath();
    writer = startCli(['--backfill', '--from', addDays(TODAY, -9)], env(service, dbPath, { LOG_LEVEL: 'debug', THREAT_MIRROR_CONCURRENCY: '2' }));
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
  });
});
