// What docs/architecture.md claims of the source, checked the way the document shows it: every
// import points down the layers (scripts/import-layers.mjs), the SQL that changes the mirror's
// tables lives in src/db/sql/ alone, and no file of src/ passes 350 lines.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain script, run by node; its exports are typed by what it returns here.
import { LAYERS, layerOf, upwardImports } from '../scripts/import-layers.mjs';

const SRC = join(import.meta.dirname, '..', 'src');
const files = (readdirSync(SRC, { recursive: true }) as string[]).filter((file) => file.endsWith('.ts'));

describe('src/', () => {
  it('imports only down its layers, and every module is in one', () => {
    expect(upwardImports(SRC) as Array<[string, string]>).toEqual([]);
    const unplaced = files.filter((file) => !file.startsWith('standin/') && (layerOf as (path: string) => number | undefined)(file) === undefined);
    expect(unplaced).toEqual([]);
    expect((LAYERS as string[]).length).toBeGreaterThan(10);
  });

  it('changes the mirror with SQL from src/db/sql/ only', () => {
    // A statement that writes: INSERT/REPLACE INTO, UPDATE … SET, DELETE FROM, CREATE/DROP of a schema object.
    const writes = /\b(INSERT\s+(OR\s+\w+\s+)?INTO|REPLACE\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(UNIQUE\s+)?(TABLE|INDEX|VIEW|TRIGGER)|DROP\s+(TABLE|INDEX|VIEW|TRIGGER))\b/;
    const outside = files.filter((file) => !file.startsWith('db/sql/') && !file.startsWith('standin/') && writes.test(readFileSync(join(SRC, file), 'utf8')));
    // Files of their own, never the mirror: the export index (THREAT_MIRROR_DB.exports/index.db;
    // its schema in index-view.ts, its one writer the refresh job) and the scratch database a host
    // list is built in.
    expect(outside).toEqual(['export/export-index.ts', 'export/host-set.ts', 'export/index-view.ts']);
  });

  it('has no file over 350 lines', () => {
    const long = files.map((file) => ({ file, lines: readFileSync(join(SRC, file), 'utf8').split('\n').length - 1 })).filter(({ lines }) => lines > 350);
    expect(long).toEqual([]);
  });
});
