#!/usr/bin/env node
// Which way the imports of src/ point (docs/architecture.md): every relative import, static or
// dynamic, between the layers below, top first. An import may point down the list or stay in its
// own layer; one that points up is printed and makes the exit code 1. `--edges` prints every
// layer-to-layer edge with the files that make it, `--cycles` the import cycles within layers.
// test/architecture.test.ts runs the same checks.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The layers, top first: a path is in the first layer whose prefix it starts with. */
export const LAYERS = [
  'cli.ts',
  'cli/',
  'commands/',
  'daemon/',
  'serve/',
  'export/jobs/',
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

/** The import cycles of `src` (strongly connected sets of two modules or more), each sorted. */
export function importCycles(src) {
  const graph = new Map();
  for (const [from, to] of importsOf(src)) graph.set(from, [...(graph.get(from) ?? []), to]);
  // Tarjan's algorithm.
  const order = new Map();
  const low = new Map();
  const stack = [];
  const cycles = [];
  const visit = (module) => {
    order.set(module, order.size);
    low.set(module, order.get(module));
    stack.push(module);
    for (const next of graph.get(module) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(module, Math.min(low.get(module), low.get(next)));
      } else if (stack.includes(next)) low.set(module, Math.min(low.get(module), order.get(next)));
    }
    if (low.get(module) !== order.get(module)) return;
    const cycle = stack.splice(stack.indexOf(module));
    if (cycle.length > 1) cycles.push(cycle.sort());
  };
  for (const module of graph.keys()) if (!order.has(module)) visit(module);
  return cycles;
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
  if (process.argv.includes('--cycles')) for (const cycle of importCycles(src)) console.log(`cycle: ${cycle.join(' -> ')}`);
  const upward = upwardImports(src);
  for (const [from, to] of upward) console.log(`UP: ${from} -> ${to}`);
  console.log(upward.length === 0 ? 'every import points down the layers' : `${upward.length} imports point up`);
  process.exitCode = upward.length === 0 ? 0 : 1;
}
