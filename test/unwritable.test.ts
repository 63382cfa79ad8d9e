// A database folder the process may not write (a root-owned volume, say): exit 1 with a message
// naming the path and the uid/gid that needs write access, before any request or file is made.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateThreats } from '../src/standin/index.js';
import { CLI_PATH } from './support/cli.js';
import { mirrorEnvFor, startTestStandin } from './support/service.js';
import { skipFor } from './support/judges.js';
import { tempDir } from './support/temp.js';

const NOBODY = 65534;
const KEY = 'acme-unwritable-key';

/** Root ignores permissions: the CLI must run as another user, which needs root and setpriv. */
function setprivMissing(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root, so the CLI cannot be run as another user';
  try {
    execFileSync('setpriv', ['--version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'setpriv (Debian package util-linux) is not installed';
  }
}

function runAsNobody(args: readonly string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', CLI_PATH, ...args], {
      env: { PATH: process.env.PATH ?? '', NODE_OPTIONS: '', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe.skipIf(skipFor(setprivMissing()))('a database folder the process cannot write', () => {
  async function attempt(dbPath: string) {
    const standin = await startTestStandin({
      threats: generateThreats({ seed: 3, organizations: ['acme'], count: 50, fromDay: '2026-03-10', toDay: '2026-03-15' }),
      keys: { organizationKeys: { [KEY]: 'acme' }, userKeys: {} },
    });
    const result = await runAsNobody(['--once'], mirrorEnvFor(KEY, '2026-03-15T12:00:00.000Z')(standin, dbPath));
    expect(standin.stats.requests).toHaveLength(0);
    return result;
  }

  it('an existing root-owned folder: names it and the uid and gid, exits 1, creates nothing', async () => {
    const volume = tempDir();
    chmodSync(volume, 0o755); // readable by everyone, writable by root only, as a fresh volume
    const result = await attempt(join(volume, 'threat-mirror.db'));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${volume} is not writable by uid ${NOBODY} (gid ${NOBODY})`);
    expect(result.stderr).toContain(join(volume, 'threat-mirror.db'));
    expect(readdirSync(volume)).toEqual([]);
  });

  it('a folder it would have to create inside one: names the folder it could not create', async () => {
    const volume = tempDir();
    chmodSync(volume, 0o755);
    const result = await attempt(join(volume, 'mirror', 'threat-mirror.db'));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${join(volume, 'mirror')} is not writable by uid ${NOBODY} (gid ${NOBODY})`);
    expect(existsSync(join(volume, 'mirror'))).toBe(false);
  });
});
