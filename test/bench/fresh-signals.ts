// `npm run bench:fresh-signals`: what the daemon's fresh answers (/v1/lookup?fresh=1) leave on the
// heap. Each value's deadline is AbortSignal.any of a timeout and a signal that aborts when the
// serving thread that asked is gone; Node 20 and 22 keep each such signal on its sources' lists
// until it is collected, so a source as long-lived as the thread gathers every answer's. Two ways
// are measured, each in a process of its own (--expose-gc), BENCH_ANSWERS answers (default
// 200,000) of one value with no organization to ask (no request, the deadline still made): the
// daemon's (createFreshAsker: an AbortController per answer, chained to the thread's signal) and
// the thread's signal handed down as is (askValues, as before de6f467); and, for a floor, as many
// bare AbortSignal.timeout calls (what Node itself keeps of them). The heap is read after the
// timeouts have fired and five collections.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { apiOptionsFor } from '../../src/api/client-options.js';
import { loadConfig } from '../../src/config.js';
import { createFreshAsker } from '../../src/daemon/fresh-http.js';
import { FRESH_TIMEOUT_MS } from '../../src/lookup/fresh-lookup.js';
import { askValues } from '../../src/lookup/fresh-document.js';

const ANSWERS = Number(process.env.BENCH_ANSWERS ?? 200_000);
const WAYS = ['per-answer', 'thread-signal', 'timeouts-alone'] as const;
type Way = (typeof WAYS)[number];

async function measure(way: Way): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc as () => void;
  const config = loadConfig({ THREAT_MIRROR_API_URL: 'http://127.0.0.1:9', THREAT_MIRROR_API_KEY: 'bench-fresh-signals' });
  const api = apiOptionsFor(config, pino({ level: 'silent' }));
  const clock = (): Date => new Date();
  const asker = createFreshAsker(config, { api, clock });
  const thread = new AbortController().signal;
  const asks: Record<Way, () => Promise<unknown>> = {
    'per-answer': () => asker(['https://bench.example/'], [], thread),
    'thread-signal': () => askValues(['https://bench.example/'], [], { api, today: '2026-03-15', initialDays: 30, signal: thread }),
    'timeouts-alone': async () => AbortSignal.timeout(FRESH_TIMEOUT_MS),
  };
  const ask = asks[way];
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let answer = 0; answer < ANSWERS; answer += 1) await ask();
  await new Promise((resolve) => setTimeout(resolve, FRESH_TIMEOUT_MS + 500));
  for (let round = 0; round < 5; round += 1) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  console.log(`| ${process.version} | ${way} | ${((process.memoryUsage().heapUsed - before) / 2 ** 20).toFixed(1)} MiB |`);
}

const way = process.argv[2] as Way | undefined;
if (way !== undefined) await measure(way);
else {
  console.log(`${ANSWERS} fresh answers, heap left after collections:\n| Node | deadline's source | heap growth |\n|---|---|---:|`);
  for (const each of WAYS) {
    const child = spawnSync(process.env.BENCH_NODE ?? process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), each], { stdio: ['ignore', 'inherit', 'inherit'] });
    if (child.status !== 0) process.exitCode = 1;
  }
}
