// Which SQLite driver the running program really loads, seen from outside: the native binaries
// mapped into a daemon that migrated a new file, synced, served lookups and DNS and wrote its exports
// (every thread that opens a connection). better-sqlite3 12 aborts the process on Node 24 and 13
// segfaults on Node 20 (src/db/sqlite.ts), so the other one must never be mapped, whatever path
// loads it: a source import, or a library that requires it (drizzle's better-sqlite3 driver does).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats } from '../src/standin/index.js';
import { servingPort, startCli } from './support/cli.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDir } from './support/temp.js';

const KEY = 'acme-driver-key';
const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const env = mirrorEnvFor(KEY, NOW);

/**
 * The package folders of the SQLite drivers' native binaries mapped into process `pid`: 12 builds
 * build/Release/better_sqlite3.node, 13 ships prebuilds/<platform>.node.
 */
function mappedDrivers(pid: number): string[] {
  const paths = readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n').map((line) => line.slice(line.indexOf('/')));
  const binaries = new Set(paths.filter((path) => path.endsWith('.node')).map((path) => /node_modules\/(better-sqlite3[^/]*)\//.exec(path)?.[1]));
  binaries.delete(undefined);
  return [...binaries].map(String).sort();
}

it('a daemon maps only the driver of its Node major: better-sqlite3 on 20, better-sqlite3-napi from 22 on', async () => {
  const service = await serveThreats(KEY, NOW, generateThreats({ seed: 5, organizations: ['acme'], count: 300, fromDay: addDays(TODAY, -4), toDay: TODAY }));
  const folder = tempDir();
  const daemon = startCli([], env(service, join(folder, 'mirror.db'), { THREAT_MIRROR_HTTP_PORT: '0', THREAT_MIRROR_DNS_PORT: '0', THREAT_MIRROR_EXPORTS: `rpz=${join(folder, 'threats.rpz')},csv=${join(folder, 'threats.csv')}` }));
  const port = await servingPort(daemon);
  await daemon.waitForLog((line) => line.status === 'succeeded');
  expect((await fetch(`http://127.0.0.1:${port}/v1/lookup?value=https://unlisted.example/`)).status).toBe(200);
  await daemon.waitForLog((line) => line.msg === 'export written');
  const pid = daemon.child.pid ?? 0;
  const major = Number(process.versions.node.split('.')[0]);
  expect(mappedDrivers(pid)).toEqual([major >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3']);
  daemon.kill('SIGTERM');
  expect((await daemon.exited).code).toBe(0);
});
