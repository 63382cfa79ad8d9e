// Loaded into the compiled CLI with `node --require` (NODE_OPTIONS) by tests. Unlike an --import
// preload (which Node 20 runs in the main thread only), a --require preload runs in every thread,
// so it reaches the serving thread (told apart by its workerData) where no request can:
//   SERVING_CLOCK_OFFSET_S=N     the serving thread's clock (Date.now) runs N seconds ahead of the
//                                machine's: TSIG's time check, judged by dig -y;
//   SERVING_THREAD_FAULT=throw   SIGUSR2 to the process makes the serving thread throw an error that
//                                nothing catches, and die as from a bug (the main thread passes the
//                                signal on over a BroadcastChannel), writing "serving thread fault
//                                <Date.now()>" to stderr first.
'use strict';
const { BroadcastChannel, isMainThread, workerData } = require('node:worker_threads');

const CHANNEL = 'threat-mirror-test-serving-thread-faults';
const fault = process.env.SERVING_THREAD_FAULT;

/** The serving thread's workerData (src/serve/protocol.ts, ServingThreadData) names its HTTP host and its enforcement side. */
function isServingThread(data) {
  return typeof data === 'object' && data !== null && 'enforcement' in data && 'host' in data;
}

if (isMainThread) {
  if (fault === 'throw') {
    const channel = new BroadcastChannel(CHANNEL);
    channel.unref();
    process.on('SIGUSR2', () => channel.postMessage('throw'));
  }
} else if (isServingThread(workerData)) {
  const offsetMs = Number(process.env.SERVING_CLOCK_OFFSET_S ?? 0) * 1000;
  if (offsetMs !== 0) {
    const machineNow = Date.now;
    Date.now = () => machineNow() + offsetMs;
  }
  if (fault === 'throw') {
    const channel = new BroadcastChannel(CHANNEL);
    channel.unref();
    channel.onmessage = () => {
      process.stderr.write(`serving thread fault ${Date.now()}\n`);
      setImmediate(() => {
        throw new Error('test fault: the serving thread threw what nothing catches');
      });
    };
  }
}
