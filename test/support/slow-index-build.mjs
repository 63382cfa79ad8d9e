// Loaded into the compiled CLI with `node --import` (NODE_OPTIONS), on every thread, by
// test/export-thread.test.ts: whichever thread runs the statement of SLOW_INDEX_AT (by default
// the one that creates the daemon's export index, its threat_entries table) is held SLOW_INDEX_MS
// there, as a build at a million threats keeps a thread busy, and writes "export index created on
// <main|worker> <ms>" to stderr first. SLOW_INDEX_IN=native holds it in native code (a child
// process waited for), as a long SQLite step does: Worker.terminate() cannot cut that short, the
// thread ends only when the call returns; by default the thread busy-waits in JavaScript.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { isMainThread } from 'node:worker_threads';

// The driver src/db/sqlite.ts picks for this Node.
const driver = Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';
const Database = createRequire(import.meta.url)(driver);
const exec = Database.prototype.exec;
const at = process.env.SLOW_INDEX_AT ?? 'CREATE TABLE threat_entries';
const ms = Number(process.env.SLOW_INDEX_MS ?? 4000);
Database.prototype.exec = function slowIndexExec(sql) {
  if (typeof sql === 'string' && sql.includes(at)) {
    if (process.env.SLOW_INDEX_IN === 'native') {
      process.stderr.write(`export index held in native code on ${isMainThread ? 'main' : 'worker'} ${Date.now()}\n`);
      execFileSync('sleep', [String(ms / 1000)]);
    } else {
      const until = Date.now() + ms;
      while (Date.now() < until) {
        // busy: nothing else runs on this thread meanwhile
      }
      process.stderr.write(`export index created on ${isMainThread ? 'main' : 'worker'} ${Date.now()}\n`);
    }
  }
  return exec.call(this, sql);
};
