// Preloaded into the CLI by `npm run bench:event-loop` (node --import): the main thread's
// event-loop delay (perf_hooks.monitorEventLoopDelay) from the first request the process sends to
// the service until it exits, written as JSON to BENCH_EVENT_LOOP_OUT. Other threads, and a
// process without the variable, are left alone.
import diagnostics from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const out = process.env.BENCH_EVENT_LOOP_OUT;
if (isMainThread && out !== undefined) {
  // Sampled every millisecond: a delay is how late that timer fires.
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  let since: number | undefined;
  const start = (): void => {
    if (since !== undefined) return;
    since = Date.now();
    histogram.enable();
    diagnostics.unsubscribe('http.client.request.start', start);
  };
  diagnostics.subscribe('http.client.request.start', start);
  process.on('exit', () => {
    histogram.disable();
    const ms = (ns: number): number => Math.round(ns / 1e4) / 100;
    const figures = {
      since,
      until: Date.now(),
      samples: histogram.count,
      p50: ms(histogram.percentile(50)),
      p99: ms(histogram.percentile(99)),
      max: ms(histogram.max),
      mean: ms(histogram.mean),
    };
    writeFileSync(out, JSON.stringify(figures));
  });
}
