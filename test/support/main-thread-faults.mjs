// Loaded into the compiled CLI with `node --import` (NODE_OPTIONS) by test/http-thread.test.ts:
// faults of the daemon's main thread that no request can cause, set off by SIGUSR2.
//   MAIN_THREAD_FAULT=block    the main thread busy-waits MAIN_THREAD_BLOCK_MS (a stuck event loop),
//                              writing "main thread blocked <ms>" and "… unblocked <ms>" (Date.now())
//                              to stderr around it;
//   MAIN_THREAD_FAULT=end-writer    the writer thread is ended: the next worker thread started after the
//                              signal, the writer started again for the next write once the daemon has
//                              ended the first worker thread (the writer, started before any other)
//                              between runs, which this writes to stderr as "first worker ended". Not
//                              the first while it lives: a signal during its graceful end would land
//                              too late to fail anything (CI once waited 60 s for an exit that never came).
// (The serving thread's faults are in serving-thread-faults.cjs: they must run in that thread.)
import { isMainThread } from 'node:worker_threads';

if (isMainThread) {
  let first;
  let endNext = false;
  process.on('worker', (worker) => {
    if (first === undefined) {
      first = worker;
      worker.once('exit', () => process.stderr.write('first worker ended\n'));
    } else if (endNext) {
      endNext = false;
      void worker.terminate();
    }
  });
  process.on('SIGUSR2', () => {
    if (process.env.MAIN_THREAD_FAULT === undefined || process.env.MAIN_THREAD_FAULT === 'none') return;
    if (process.env.MAIN_THREAD_FAULT === 'end-writer') {
      endNext = true;
      return;
    }
    const until = Date.now() + Number(process.env.MAIN_THREAD_BLOCK_MS ?? 4000);
    process.stderr.write(`main thread blocked ${Date.now()}\n`);
    while (Date.now() < until) {
      // busy: no timer, no I/O, no message is handled on this thread meanwhile
    }
    process.stderr.write(`main thread unblocked ${Date.now()}\n`);
  });
}
