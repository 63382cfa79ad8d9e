// Loaded into the compiled CLI with `node --import` (NODE_OPTIONS), on every thread, by
// test/export-parallel.test.ts: when the `export` command's helper thread starts (its workerData
// names a block kind and a change_seq), the mirror at MOVE_MIRROR_DB changes first, as a sync
// committing at that moment would: every threat's content and change_seq move.
import { createRequire } from 'node:module';
import { isMainThread, workerData } from 'node:worker_threads';

const target = process.env.MOVE_MIRROR_DB;
if (!isMainThread && target !== undefined && typeof workerData?.kind === 'string' && typeof workerData?.changeSeq === 'number') {
  // The driver src/db/sqlite.js picks for this Node.
  const driver = Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';
  const Database = createRequire(import.meta.url)(driver);
  const db = new Database(target);
  db.pragma('busy_timeout = 5000');
  db.exec("UPDATE threats SET content = content || '#moved', change_seq = change_seq + 1000000");
  db.close();
  process.stderr.write('mirror moved\n');
}
