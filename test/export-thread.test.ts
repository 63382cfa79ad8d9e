// The daemon's export index is built on a thread of its own, never on the main thread: at a
// million threats the build keeps a thread busy for seconds, and the main thread must go on
// answering the probes, the scheduler and signals meanwhile. A fixture makes whichever thread
// creates the index busy-wait 4 s, as such a build would.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { servingPort, startCli } from './support/cli.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { scalar } from './support/mirror-db.js';
import { tempDir } from './support/temp.js';

const KEY = 'acme-export-thread-key';
const NOW = '2026-03-15T12:00:00.000Z';
const SLOW = fileURLToPath(new URL('./support/slow-index-build.mjs', import.meta.url));
const SLOW_INDEX_MS = 4_000;
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: '2', THREAT_MIRROR_HTTP_PORT: '0', THREAT_MIRROR_SCHEDULE: '0 0 1 1 *' });

describe('the export index', () => {
  it('is built on a thread of its own: /healthz (answered by the main thread) stays prompt while the build keeps that thread busy', async () => {
    const service = await serveThreats(KEY, NOW, [{ id: 1, content: 'https://tm-thread-phish.com/', type: 'URL', blockedAt: '2026-03-15T10:00:00.000Z', organization: 'acme' }]);
    const folder = tempDir();
    const domains = join(folder, 'domains.txt');
    const daemon = startCli([], env(service, join(folder, 'mirror.db'), {
      THREAT_MIRROR_EXPORTS: `domains=${domains}`,
      NODE_OPTIONS: `--import=${SLOW}`,
      SLOW_INDEX_MS: String(SLOW_INDEX_MS),
    }));
    const port = await servingPort(daemon);
    // The build starts right after the server listens; probe the main thread until it is done.
    let slowest = 0;
    while (!daemon.logs.some((line) => line.msg === 'export index built')) {
      const started = performance.now();
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      slowest = Math.max(slowest, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(daemon.stderr).toMatch(/^export index created on worker \d+$/m);
    // Loose for a loaded 2-core machine; on the main thread the build held every probe 4 s.
    expect(slowest).toBeLessThan(2_000);

    // The index so built is the one the files come from.
    await daemon.waitForLog((line) => line.msg === 'export written' && line.path === domains);
    expect(readFileSync(domains, 'utf8')).toMatch(/^tm-thread-phish\.com$/m);
    daemon.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  });

  it('stopped while its build reads the mirror, ends that thread before the writer closes: the WAL is folded into the file', async () => {
    const service = await serveThreats(KEY, NOW, [{ id: 1, content: 'https://tm-thread-stop.com/', type: 'URL', blockedAt: '2026-03-15T10:00:00.000Z', organization: 'acme' }]);
    const folder = tempDir();
    const dbPath = join(folder, 'mirror.db');
    // The build holds its read transaction on the mirror in a native call that terminate() cannot cut short.
    const daemon = startCli([], env(service, dbPath, {
      THREAT_MIRROR_EXPORTS: `domains=${join(folder, 'domains.txt')}`,
      NODE_OPTIONS: `--import=${SLOW}`,
      SLOW_INDEX_AT: 'DELETE FROM threat_entries',
      SLOW_INDEX_IN: 'native',
      SLOW_INDEX_MS: '3000',
    }));
    await daemon.waitForStderr(/^export index held in native code on worker \d+$/m);
    daemon.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
    // The writer's last close folded the WAL into the file: it cannot while another connection
    // holds it, and could when the daemon stopped without waiting for the build's thread to end.
    // The file rests in WAL mode with -wal and -shm in place (for readers on read-only mounts).
    expect(statSync(`${dbPath}-wal`).size).toBe(0);
    expect(scalar(dbPath, 'PRAGMA journal_mode')).toBe('wal');
  });
});
