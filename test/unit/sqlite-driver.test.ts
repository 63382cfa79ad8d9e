// Every connection goes through src/db/sqlite.ts, which picks the driver that works on this Node.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Database, SQLITE_DRIVER } from '../../src/db/sqlite.js';

const ROOT = join(import.meta.dirname, '..', '..');

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(ts|mjs|js)$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('the SQLite driver', () => {
  it('is better-sqlite3 13 (Node-API) from Node 22 on, 12 on Node 20, and opens a database', () => {
    const major = Number(process.versions.node.split('.')[0]);
    expect(SQLITE_DRIVER).toBe(major >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3');
    const db = new Database(':memory:');
    try {
      expect(db.prepare('SELECT 6 * 7 AS answer').get()).toEqual({ answer: 42 });
    } finally {
      db.close();
    }
  });

  it('is the only module that loads better-sqlite3 at run time', () => {
    // A direct import would load version 12 on Node 24, where it aborts the process at a GC.
    const direct = /^\s*import\s+(?!type\b)[^;]*from\s+'better-sqlite3(-napi)?'|require\(\s*'better-sqlite3/m;
    const offenders = [...sourceFiles('src'), ...sourceFiles('test')]
      .filter((file) => !file.endsWith(join('src', 'db', 'sqlite.ts')))
      .filter((file) => direct.test(readFileSync(file, 'utf8')));
    expect(offenders).toEqual([]);
  });
});
