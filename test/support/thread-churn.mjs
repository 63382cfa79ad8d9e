// Starts and ends a daemon's per-run threads CYCLES times, as its runs do, on a new mirror at DB:
// the writer's (started, one write, suspended) and an export refresh job (the export index, as the
// DNS primary keeps it). Run from the compiled program by test/thread-memory.test.ts under heaptrack.
// Usage: node thread-churn.mjs DB CYCLES
import { exportIndexPathOf } from '../../dist/src/db/database-files.js';
import { WriterClient } from '../../dist/src/db/writer/writer-client.js';
import { runExportJob } from '../../dist/src/export/jobs/export-job-client.js';
import { zoneTimersFor } from '../../dist/src/lib/rpz-zone.js';

const [dbPath, cycles] = [process.argv[2], Number(process.argv[3])];
const now = '2026-11-28T12:00:00.000Z';
const writer = new WriterClient({ dbPath, maxPageBytes: 4 * 2 ** 20, autoCheckpoint: true, now });
await writer.ready;
for (let cycle = 0; cycle < cycles; cycle += 1) {
  writer.resume();
  await writer.call('recordSetting', { key: 'churn', value: String(cycle), now });
  await writer.suspend();
  const job = { kind: 'refresh', dbPath, indexPath: exportIndexPathOf(dbPath), rebuild: cycle === 0, atStart: false, targets: [], timers: zoneTimersFor(60), refresher: undefined, allowlist: undefined, nowMs: Date.parse(now) };
  await runExportJob(job, () => undefined);
}
await writer.close();
