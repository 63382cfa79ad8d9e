#!/usr/bin/env node
// Which way the imports of src/ point (docs/architecture.md): every relative import, static or
// dynamic, between the layers below, top first. An import may point down the list or stay in its
// own layer; one that points up is printed and makes the exit code 1. `--edges` prints every
// layer-to-layer edge with the files that make it. test/architecture.test.ts runs the same check.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The layers, top first: a path is in the first layer whose prefix it starts with. */
export const LAYERS = [
  'cli.ts',
  'commands/',
  'cli/',
  'daemon/',
  'serve/',
  'export-jobs/',
  'session/',
  'progress/',
  'sync/',
  'dns/',
  'export/',
  'lookup/',
  'api/',
  'config.ts',
  'config/',
  'db/writer/',
  'db/sql/',
  'db/read/',
  'db/',
  'allowlist/',
  'url/',
  'records.ts',
  'lib/',
];

/** Apart from the layers: the stand-in of the service (its own program, imported by nothing in the layers). */
export const OUTSIDE = ['standin/'];

export function layerOf(path) {
  const index = LAYERS.findIndex((prefix) => path === prefix || (prefix.endsWith('/') && path.startsWith(prefix)));
  return index < 0 ? undefined : index;
}

/** Every relative import of every module of `src`: [from, to], both relative to src. */
export function importsOf(src) {
  const edges = [];
  for (const file of readdirSync(src, { recursive: true })) {
    if (!file.endsWith('.ts') || OUTSIDE.some((prefix) => file.startsWith(prefix))) continue;
    const text = readFileSync(join(src, file), 'utf8');
    for (const match of text.matchAll(/(?:from\s+|import\s*\(\s*)'(\.[^']+)'/g)) {
      const target = normalize(join(dirname(file), match[1])).replace(/\.js$/, '.ts');
      edges.push([file, target]);
    }
  }
  return edges;
}

/** The imports that point up the layers (or into a path no layer names). */
export function upwardImports(src) {
  return importsOf(src).filter(([from, to]) => {
    const source = layerOf(from);
    const target = layerOf(to);
    return source === undefined || target === undefined || target < source;
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const src = join(dirname(fileURLToPath(import.meta.url)), '..', 'src');
  if (process.argv.includes('--edges')) {
    const byLayers = new Map();
    for (const [from, to] of importsOf(src)) {
      const key = `${LAYERS[layerOf(from)] ?? from} -> ${LAYERS[layerOf(to)] ?? to}`;
      if (LAYERS[layerOf(from)] === LAYERS[layerOf(to)]) continue;
      byLayers.set(key, [...(byLayers.get(key) ?? []), relative('.', from)]);
    }
    for (const [key, files] of [...byLayers].sort()) console.log(`${key}  (${[...new Set(files)].join(', ')})`);
  }
  const upward = upwardImports(src);
  for (const [from, to] of upward) console.log(`UP: ${from} -> ${to}`);
  console.log(upward.length === 0 ? 'every import points down the layers' : `${upward.length} imports point up`);
  process.exitCode = upward.length === 0 ? 0 : 1;
}
