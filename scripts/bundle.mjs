// Links the compiled CLI (dist/src, from tsc) into a few files in dist/bin: what `threat-mirror`
// runs. Every run used to load ~250 modules one by one before its first request (~120 ms of a
// ~500 ms start-up on the 2-core development machine; docs/performance.md), and a scheduled
// sync is a fresh process each time. tsc stays the compiler and type checker; esbuild only
// links its output.
//
// dist/bin is flat on purpose: the worker threads are started by URLs relative to the module
// that starts them (`new URL('./writer-thread.js', import.meta.url)`), and every thread's
// file sits beside the code that starts it, as it does in dist/src.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

const outdir = 'dist/bin';
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: [
    'dist/src/cli.js',
    'dist/src/db/writer/writer-thread.js',
    'dist/src/serve/serving-thread.js',
    'dist/src/export/jobs/export-job-thread.js',
    'dist/src/export/parallel/export-helper-thread.js',
    'dist/src/db/snapshot-thread.js',
  ],
  outdir,
  entryNames: '[name]',
  chunkNames: '[name]-[hash]',
  bundle: true,
  // Shared code in chunks, loaded once per thread; dynamic imports stay lazy: the Public Suffix
  // List only when a sync's first page needs lookup columns (or a lookup runs), drizzle's migrator
  // only when the writer thread finds a migration pending, the daemon's modules only for the daemon.
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // The native driver loads its compiled addon from its own folder: it stays in node_modules.
  external: ['better-sqlite3', 'better-sqlite3-napi'],
  // CommonJS dependencies (pino) call require(); an ES module has none of its own.
  banner: { js: "import { createRequire as __threatMirrorRequire } from 'node:module'; const require = __threatMirrorRequire(import.meta.url);" },
  legalComments: 'none',
  logLevel: 'warning',
});
