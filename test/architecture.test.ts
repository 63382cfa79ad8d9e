// What docs/architecture.md claims of the source, checked the way the document shows it: every
// import points down the layers (scripts/import-layers.mjs) and no file is in an import cycle, the
// thread table maps one row to one folder (every thread started in src/ has its home there) and
// the bundle starts each, the writer-call list is WriterCalls, the SQL that changes the mirror's
// tables lives in src/db/sql/ alone, every read-only connection is opened in one place, the tree
// at the doc's end is the tree, and no file of src/ passes 350 lines nor a function 60.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain script, run by node; its exports are typed by what it returns here.
import { importCycles, LAYERS, layerOf, upwardImports } from '../scripts/import-layers.mjs';

const SRC = join(import.meta.dirname, '..', 'src');
const ARCHITECTURE = readFileSync(join(import.meta.dirname, '..', 'docs', 'architecture.md'), 'utf8');
const files = (readdirSync(SRC, { recursive: true }) as string[]).filter((file) => file.endsWith('.ts'));

describe('src/', () => {
  it('imports only down its layers, and every module is in one', () => {
    expect(upwardImports(SRC) as Array<[string, string]>).toEqual([]);
    const unplaced = files.filter((file) => !file.startsWith('standin/') && (layerOf as (path: string) => number | undefined)(file) === undefined);
    expect(unplaced).toEqual([]);
    expect((LAYERS as string[]).length).toBeGreaterThan(10);
  });

  it('has no import cycle across files (the daemon\'s enforcement, metrics and allowlist were one; lookup and its matches another)', () => {
    expect(importCycles(SRC) as string[][]).toEqual([]);
  });

  it('maps one row of the thread table to one folder, which holds the thread it starts (and its messages beside its client)', () => {
    const table = ARCHITECTURE.slice(ARCHITECTURE.indexOf('| thread | home |'));
    const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
    // A row's home: the first folder its second cell names.
    const homes = rows.map((row) => /`src\/([^`]+\/)`/.exec(row.split('|')[2] ?? '')?.[1]);
    expect(rows.length).toBeGreaterThanOrEqual(6);
    expect(homes.every((home) => home !== undefined)).toBe(true);
    expect(new Set(homes).size).toBe(homes.length);
    // Every thread started in src/ (the stand-in aside) runs a file directly in one home, its starter beside it.
    const threads = files
      .filter((file) => !file.startsWith('standin/'))
      .flatMap((file) => [...readFileSync(join(SRC, file), 'utf8').matchAll(/new Worker\(new URL\('\.\/([^']+)\.js'/g)].map((match) => join(dirname(file), `${match[1]}.ts`)));
    expect(threads.length).toBeGreaterThanOrEqual(5);
    for (const thread of threads) expect(homes, thread).toContain(`${dirname(thread)}/`);
    // Every home but the main thread's runs a thread; none runs in daemon/ (the main thread's).
    expect(homes.filter((home) => !threads.some((thread) => `${dirname(thread)}/` === home))).toEqual(['daemon/']);
    // A thread with a client of its own has its messages beside it.
    for (const home of homes) {
      const inHome = files.filter((file) => dirname(file) === (home as string).slice(0, -1));
      if (inHome.some((file) => file.endsWith('-client.ts'))) expect(inHome, home).toContain(`${home}protocol.ts`);
    }
  });

  it("starts no thread the bundle lacks: scripts/bundle.mjs's entries are cli.js and every thread's file", () => {
    const bundle = readFileSync(join(SRC, '..', 'scripts', 'bundle.mjs'), 'utf8');
    const entries = [...bundle.matchAll(/'dist\/src\/([^']+)\.js'/g)].map((match) => `${match[1]}.ts`);
    const threads = files
      .filter((file) => !file.startsWith('standin/'))
      .flatMap((file) => [...readFileSync(join(SRC, file), 'utf8').matchAll(/new Worker\(new URL\('\.\/([^']+)\.js'/g)].map((match) => join(dirname(file), `${match[1]}.ts`)));
    expect(entries.sort()).toEqual(['cli.ts', ...threads].sort());
  });

  it("lists every call of the writer's protocol (WriterCalls in db/writer/protocol.ts), and no other", () => {
    const protocol = readFileSync(join(SRC, 'db', 'writer', 'protocol.ts'), 'utf8');
    const body = protocol.slice(protocol.indexOf('export interface WriterCalls {'));
    const calls = [...body.slice(0, body.indexOf('\n}')).matchAll(/^\s+readonly (\w+): \{ readonly input/gm)].map((match) => match[1]);
    const section = ARCHITECTURE.slice(ARCHITECTURE.indexOf('### The writer'), ARCHITECTURE.indexOf('and `close`.'));
    const listed = [...section.slice(section.indexOf('(`WriterCalls`):') + '(`WriterCalls`):'.length).matchAll(/`(\w+)`/g)].map((match) => match[1]);
    expect(calls.length).toBeGreaterThanOrEqual(20);
    expect(listed.sort()).toEqual(calls.sort());
  });

  it('changes the mirror with SQL from src/db/sql/ only', () => {
    // A statement that writes: INSERT/REPLACE INTO, UPDATE … SET, DELETE FROM, CREATE/DROP of a schema object.
    const writes = /\b(INSERT\s+(OR\s+\w+\s+)?INTO|REPLACE\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(UNIQUE\s+)?(TABLE|INDEX|VIEW|TRIGGER)|DROP\s+(TABLE|INDEX|VIEW|TRIGGER))\b/;
    const outside = files.filter((file) => !file.startsWith('db/sql/') && !file.startsWith('standin/') && writes.test(readFileSync(join(SRC, file), 'utf8')));
    // Files of their own, never the mirror: the export index (THREAT_MIRROR_DB.exports/index.db;
    // its schema in export/index/schema.ts, its one writer the refresh job) and the scratch database a host
    // list is built in.
    expect(outside).toEqual(['export/host-set.ts', 'export/index/export-index.ts', 'export/index/schema.ts']);
  });

  it('opens every read-only connection in db/open-database.ts', () => {
    const readOnly = /new Database\([^)]*readonly: true/;
    expect(files.filter((file) => !file.startsWith('standin/') && readOnly.test(readFileSync(join(SRC, file), 'utf8')))).toEqual(['db/open-database.ts']);
  });

  it("lists every module of every folder in the doc's tree, and no other", () => {
    const section = ARCHITECTURE.slice(ARCHITECTURE.indexOf('## The tree'));
    const block = section.slice(section.indexOf('```\n') + 4, section.indexOf('\n```', section.indexOf('```\n') + 4));
    const listed = new Map<string, string[]>();
    let folder = '';
    for (const line of block.split('\n')) {
      if (!line.startsWith(' ')) folder = line.slice(0, line.indexOf(' ')).replace(/^src\//, '');
      listed.set(folder, [...(listed.get(folder) ?? []), ...line.slice(22).trim().split(/\s+/)]);
    }
    const tree = new Map<string, string[]>();
    for (const file of [...files].sort()) {
      const home = dirname(file) === '.' ? '' : `${dirname(file)}/`;
      tree.set(home, [...(tree.get(home) ?? []), file.slice(home.length, -'.ts'.length)]);
    }
    expect(tree.size).toBeGreaterThan(20);
    expect(Object.fromEntries([...listed].map(([home, names]) => [home, names.sort()]))).toEqual(Object.fromEntries([...tree].map(([home, names]) => [home, names.sort()])));
  });

  it('has no function over 60 lines', () => {
    const long: string[] = [];
    for (const file of files) {
      const source = ts.createSourceFile(file, readFileSync(join(SRC, file), 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
          const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
          const last = source.getLineAndCharacterOfPosition(node.end).line;
          if (last - first + 1 > 60) long.push(`${file}:${first + 1} (${last - first + 1} lines)`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(long).toEqual([]);
  });

  it('has no file over 350 lines', () => {
    const long = files.map((file) => ({ file, lines: readFileSync(join(SRC, file), 'utf8').split('\n').length - 1 })).filter(({ lines }) => lines > 350);
    expect(long).toEqual([]);
  });
});
