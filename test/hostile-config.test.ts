// Issue 32 items 6 and 9, as a user meets them: the built CLI refuses (exit 2, naming the variable)
// a plain-HTTP URL whose host only looks like loopback, and key files that are not small regular
// files, before it sends anything anywhere.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './support/cli.js';
import { tempDbPath, tempDir } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';

function baseEnv(extra: Record<string, string>): Record<string, string> {
  return { THREAT_MIRROR_API_URL: 'http://127.0.0.1:9', THREAT_MIRROR_DB: tempDbPath(), THREAT_MIRROR_NOW: NOW, ...extra };
}

describe('loopback means loopback (issue 32 item 6)', () => {
  it('refuses http://api.localhost: glibc resolves *.localhost by DNS, so the key could leave the machine in clear text', async () => {
    const result = await runCli(['--once'], baseEnv({ THREAT_MIRROR_API_URL: 'http://api.localhost:8080', THREAT_MIRROR_API_KEY: 'k-loopback-1' }));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/THREAT_MIRROR_API_URL: plain http:\/\/ to api\.localhost, which is not a loopback address/);
  });
});

describe('_FILE variables read small regular files only (issue 32 item 9)', () => {
  const started = (): number => performance.now();

  it('refuses /dev/zero at once, naming the variable, without reading it', async () => {
    const at = started();
    const result = await runCli(['--once'], baseEnv({ THREAT_MIRROR_API_KEY_FILE: '/dev/zero' }));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/THREAT_MIRROR_API_KEY_FILE: cannot read \/dev\/zero: not a regular file \(a character device\)/);
    expect(performance.now() - at).toBeLessThan(10_000);
  });

  it('refuses a FIFO without waiting for a writer (it hung start-up before)', async () => {
    const fifo = join(tempDir(), 'key.fifo');
    execFileSync('mkfifo', [fifo]);
    const at = started();
    const result = await runCli(['--once'], baseEnv({ THREAT_MIRROR_ORGS: 'acme', THREAT_MIRROR_API_KEY_ACME_FILE: fifo }));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`THREAT_MIRROR_API_KEY_ACME_FILE: cannot read ${fifo}: not a regular file (a FIFO)`);
    // Far below the test's own timeout, which a hang would run into.
    expect(performance.now() - at).toBeLessThan(10_000);
  });

  it('refuses a regular file over 64 KiB, and a directory', async () => {
    const dir = tempDir();
    const big = join(dir, 'big.key');
    writeFileSync(big, 'k'.repeat(64 * 1024 + 1));
    const tooBig = await runCli(['--once'], baseEnv({ THREAT_MIRROR_API_KEY_FILE: big }));
    expect(tooBig.code).toBe(2);
    expect(tooBig.stderr).toContain(`THREAT_MIRROR_API_KEY_FILE: cannot read ${big}: 65537 bytes, more than the 65536 a key file may have`);
    const directory = await runCli(['--once'], baseEnv({ THREAT_MIRROR_API_KEY_FILE: dir }));
    expect(directory.code).toBe(2);
    expect(directory.stderr).toContain('not a regular file (a directory)');
  });
});
