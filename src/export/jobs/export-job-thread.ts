// One export job (export-job-client.ts) on a thread of its own: it posts its log lines and
// metrics, then its result, and ends. Its SQLite connections are its own: the mirror's read-only,
// the export index's read-write in a refresh job only.
import { parentPort, workerData } from 'node:worker_threads';
import { matcherFor } from '../../allowlist/allow-matcher.js';
import { openReadOnly } from '../../db/open-database.js';
import { releaseUnreachable } from '../../db/sqlite.js';
import { type TempFile, writeTempFile } from '../atomic-file.js';
import { buildExport, buildHostExportFromIndex, type BuiltExport } from '../build-export.js';
import { ThreatSnapshot } from '../current-threats.js';
import { type ExportLog, ExportRefresher } from './export-refresher.js';
import { type IndexChange, ExportIndex } from '../index/export-index.js';
import { isHostFormat } from '../../config/export-formats.js';
import { IndexView } from '../index/index-view.js';
import type { ExportJob, FeedJob, FromJobThread, JobEvent, RefreshJob, RefreshResult } from './protocol.js';

const port = parentPort;
// Its connections are closed by then; their statements are freed before the thread ends (sqlite.ts).
if (port) void run(workerData as ExportJob, (message) => port.postMessage(message)).then(() => setImmediate(releaseUnreachable));

async function run(job: ExportJob, post: (message: FromJobThread) => void): Promise<void> {
  try {
    const result = job.kind === 'refresh' ? await refresh(job, post) : await renderFeed(job);
    post({ kind: 'done', result });
  } catch (error) {
    post({ kind: 'failed', message: error instanceof Error ? error.message : String(error), stack: error instanceof Error ? error.stack : undefined });
  }
}

/** The export index brought up to the mirror (or built), then the export files from it and from the mirror. */
async function refresh(job: RefreshJob, post: (event: JobEvent) => void): Promise<RefreshResult> {
  let index: ExportIndex | undefined;
  try {
    let change: IndexChange | undefined;
    if (job.indexPath !== undefined && job.rebuild) {
      const started = performance.now();
      index = await ExportIndex.create(job.dbPath, job.indexPath, { allowlist: job.allowlist, nowMs: job.nowMs, timers: job.timers });
      const state = index.view.state();
      log(post, 'info', { hosts: index.view.size, ms: Math.round(performance.now() - started) }, 'export index built');
      change = { hostsChanged: true, zoneChanged: true, serial: state.serial, threatsRead: 0 };
    } else if (job.indexPath !== undefined) {
      index = ExportIndex.open(job.dbPath, job.indexPath);
      change = await index.refresh(job.allowlist, job.nowMs);
    }
    let refresher = job.refresher;
    if (job.targets.length > 0) {
      const files = new ExportRefresher({
        dbPath: job.dbPath,
        targets: job.targets,
        logger: forwardingLog(post),
        observer: {
          exportChecked: (format, path, entries, lastWriteMs) => post({ kind: 'export-checked', format, path, entries, lastWriteMs }),
          exportFailed: (format, path) => post({ kind: 'export-failed', format, path }),
        },
        index,
        timers: job.timers,
        state: job.refresher,
        allowlist: job.allowlist,
      });
      // At start the files are left as they are (rewritten after runs only); the zone's serial follows the rpz file's.
      if (job.atStart) await files.adoptZoneSerial(job.nowMs);
      else await files.refresh();
      refresher = files.state();
    }
    return { change, index: index === undefined ? undefined : { state: index.view.state(), hosts: index.view.size }, refresher };
  } finally {
    index?.close();
  }
}

/** Writes a feed's new content beside its file: from the index (a consistent version of it) or from a mirror snapshot. */
async function renderFeed(job: FeedJob): Promise<TempFile> {
  const { format, organization, path, timers } = job;
  if (job.indexPath !== undefined && organization === undefined && isHostFormat(format)) {
    const db = openReadOnly(job.indexPath, { busyTimeoutMs: 0, smallPageCache: true });
    try {
      db.exec('BEGIN');
      const view = new IndexView(db);
      const built = buildHostExportFromIndex(view, format, view.state().serial, timers);
      return await writeTempFile(path, built.render(built.nextSerial(undefined)), built.commentPrefix ?? undefined);
    } finally {
      db.close();
    }
  }
  const sqlite = openReadOnly(job.dbPath, { busyTimeoutMs: 5000, smallPageCache: true });
  const snapshot = new ThreatSnapshot(sqlite, organization, matcherFor(job.allowlist?.entries));
  let built: BuiltExport | undefined;
  try {
    built = await buildExport(snapshot, { format, organization, timers });
    return await writeTempFile(path, built.render(built.nextSerial(undefined)), built.commentPrefix);
  } finally {
    built?.close();
    snapshot.close();
    sqlite.close(); // a reader never checkpoints
  }
}

function log(post: (event: JobEvent) => void, level: 'debug' | 'info' | 'warn' | 'error', fields: Record<string, unknown>, msg: string): void {
  // An Error crosses threads as its message and stack (what the logger's serializer prints of it).
  const plain = Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, value instanceof Error ? { type: value.name, message: value.message, stack: value.stack } : value]));
  post({ kind: 'log', level, fields: plain, msg });
}

function forwardingLog(post: (event: JobEvent) => void): ExportLog {
  return {
    debug: (fields, msg) => log(post, 'debug', fields, msg),
    info: (fields, msg) => log(post, 'info', fields, msg),
    error: (fields, msg) => log(post, 'error', fields, msg),
  };
}
