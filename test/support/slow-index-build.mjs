// Loaded into the compiled CLI with `node --import` (NODE_OPTIONS), on every thread, by
// test/export-thread.test.ts: whichever thread creates the daemon's export index (the statement
// that creates its threat_entries table) busy-waits SLOW_INDEX_MS there, as a build at a million
// threats keeps a thread busy, and writes "export index created on <main|worker> <ms>" to stderr.
import { createRequire } from 'node:module';
import { isMainThread } from 'node:worker_threads';

// The driver src/db/sqlite.ts picks for this Node.
const driver = Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';
const Database = createRequire(import.meta.url)(driver);
const exec = Database.prototype.exec;
Database.prototype.exec = function slowIndexExec(sql) {
  if (typeof sql === 'string' && sql.includes('CREATE TABLE threat_entries')) {
    const until = Date.now() + Number(process.env.SLOW_INDEX_MS ?? 4000);
    while (Date.now() < until) {
      // busy: nothing else runs on this thread meanwhile
    }
    process.stderr.write(`export index created on ${isMainThread ? 'main' : 'worker'} ${Date.now()}\n`);
  }
  return exec.call(this, sql);
};
