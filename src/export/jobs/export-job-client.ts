// The daemon's export work, each job on a short-lived thread of its own (export-job-thread.ts; its
// messages: protocol.ts):
// reading a million threats and sorting 400,000 hosts takes seconds of CPU, which on the main
// thread held its event loop up to ~200 ms at a time (event-loop delay p99 72 ms while the index
// was built at 1M; on this thread: p99 12 ms, the machine loaded; docs/performance.md), and on the
// serving thread would hold lookups and zone transfers back. A thread per job, gone when it is
// done, costs a fraction of a second to start and nothing while the daemon idles.
//
// Two jobs: `refresh` (started by the main thread, one at a time: the only writer of the export
// index and of the THREAT_MIRROR_EXPORTS files) and `feed` (started by the serving thread: renders
// one HTTP feed into a temporary file beside the feed's, read-only everywhere else).
import { Worker } from 'node:worker_threads';
import type { ExportJob, FromJobThread, JobEvent, ResultOf } from './protocol.js';

/**
 * Runs one job on a thread of its own; resolves with its result (the job has closed what it opened
 * by then). An abort (the daemon stopping) ends the thread where it is: the index is a scratch file
 * rebuilt at start, and a file export's temporary file is removed by the next daemon.
 */
export function runExportJob<J extends ExportJob>(job: J, onEvent: (event: JobEvent) => void, signal?: AbortSignal): Promise<ResultOf<J>> {
  const worker = new Worker(new URL('./export-job-thread.js', import.meta.url), { workerData: job });
  return new Promise((resolve, reject) => {
    let settled = false;
    // Settled once the thread has ended: its connection to the mirror is closed by then, so the
    // writer's last close that follows finds no other connection (it leaves the file in rollback mode).
    const onAbort = (): void => {
      const stopped = new Error(`the ${job.kind} job was stopped: the daemon is stopping`);
      void worker.terminate().finally(() => settle(() => reject(stopped)));
    };
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (message: FromJobThread) => {
      if (message.kind === 'done') settle(() => resolve(message.result as ResultOf<J>));
      else if (message.kind === 'failed') settle(() => reject(Object.assign(new Error(message.message), { stack: message.stack })));
      else if (!settled) onEvent(message);
    });
    worker.on('error', (error) => settle(() => reject(new Error(`the export thread failed in its ${job.kind} job: ${error.message}`, { cause: error }))));
    worker.on('exit', (code) => {
      if (!signal?.aborted) settle(() => reject(new Error(`the export thread exited (code ${code}) before it finished its ${job.kind} job`)));
    });
  });
}
