// Temporary folders that a test owns and removes, whatever happens.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterThisTest } from './cleanup.js';

export function tempDir(prefix = 'threat-mirror-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterThisTest('folders', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A mirror file's path in a new temporary folder; the file does not exist yet. */
export function tempDbPath(): string {
  return join(tempDir(), 'mirror.db');
}
