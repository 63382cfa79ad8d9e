// What the listeners' fuzzers share (test/http-fuzz.test.ts, test/dns-fuzz.test.ts): a seeded
// random source, so a round is the same bytes every time; how many rounds (FUZZ_ROUNDS, a few by
// default; FUZZ_SEED moves to other bytes); and the checks after each round: the daemon runs,
// /healthz answers, the next sync run succeeds, and the serving thread's guard answered nothing
// with a server error (a 500, a SERVFAIL, a cut connection) and the thread never restarted.
import { expect } from 'vitest';
import type { CliProcess } from './cli.js';

/** Rounds per fuzzer: FUZZ_ROUNDS, or 2 (a few seconds each). */
export const FUZZ_ROUNDS = Number(process.env.FUZZ_ROUNDS ?? 2);
/** The first round's seed (each round adds its number): FUZZ_SEED, or a fixed one. */
export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 38_001);

/** mulberry32: small, fast, and the same sequence for a seed on every machine. */
export class Rng {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** In [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)] as T;
  }

  bytes(length: number): Buffer {
    const bytes = Buffer.alloc(length);
    for (let index = 0; index < length; index += 1) bytes[index] = this.int(0, 255);
    return bytes;
  }

  /** `text` cut into 1 to `pieces` parts at random places (written one by one, a stream's chunks). */
  split(bytes: Buffer, pieces: number): Buffer[] {
    const cuts = Array.from({ length: this.int(0, pieces - 1) }, () => this.int(0, bytes.length)).sort((a, b) => a - b);
    const parts: Buffer[] = [];
    let from = 0;
    for (const cut of [...cuts, bytes.length]) {
      parts.push(bytes.subarray(from, cut));
      from = cut;
    }
    return parts.filter((part) => part.length > 0);
  }
}

/** Counts of what a round's cases got, for the summary printed after it. */
export class Tally {
  readonly #counts = new Map<string, number>();

  add(outcome: string): void {
    this.#counts.set(outcome, (this.#counts.get(outcome) ?? 0) + 1);
  }

  get total(): number {
    return [...this.#counts.values()].reduce((sum, count) => sum + count, 0);
  }

  toString(): string {
    return [...this.#counts].sort(([a], [b]) => a.localeCompare(b)).map(([outcome, count]) => `${outcome}: ${count}`).join(', ');
  }
}

/** Runs `work` over `items` with at most `concurrency` at once. */
export async function withConcurrency<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const item = items[next] as T;
        next += 1;
        await work(item);
      }
    }),
  );
}

/** The serving thread's guard counts, by listener and answer, from /metrics. */
export async function guardCounts(httpPort: number): Promise<{ failures: Map<string, number>; restarts: number }> {
  const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
  const failures = new Map<string, number>();
  for (const [, listener, route, answer, count] of text.matchAll(/^threat_mirror_serving_errors_total\{listener="([^"]*)",route="([^"]*)",answer="([^"]*)"\} (\d+)$/gm)) {
    failures.set(`${listener} ${route} ${answer}`, Number(count));
  }
  return { failures, restarts: Number(/^threat_mirror_serving_thread_restarts_total (\d+)$/m.exec(text)?.[1] ?? 0) };
}

/** Answers that say the input was at fault: the guard's 400 and FORMERR. What else it answered is a defect found. */
const CLIENT_FAULTS = /\s(400|FORMERR)$/;

/**
 * After a round: the daemon runs, /healthz answers, the next sync run succeeds, the guard caught
 * nothing but malformed input and the serving thread did not restart.
 */
export async function expectWholeAfterRound(daemon: CliProcess, httpPort: number): Promise<Map<string, number>> {
  try {
    return await checkWhole(daemon, httpPort);
  } catch (error) {
    // What the daemon said last, with the failure: a daemon that died says why there.
    throw new Error(`${error instanceof Error ? error.message : String(error)}\nthe daemon's last output:\n${daemon.stdout.slice(-4000)}\n${daemon.stderr.slice(-4000)}`, { cause: error });
  }
}

async function checkWhole(daemon: CliProcess, httpPort: number): Promise<Map<string, number>> {
  expect(daemon.running, 'the daemon exited').toBe(true);
  expect((await fetch(`http://127.0.0.1:${httpPort}/healthz`)).status).toBe(200);
  const succeeded = (): number => daemon.logs.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('sync of organization') && line.status === 'succeeded').length;
  const before = succeeded();
  await daemon.waitForLog(() => succeeded() > before);
  // The thread's reports reach /metrics within a second of the last case.
  await new Promise((resolve) => setTimeout(resolve, 1_200));
  const { failures, restarts } = await guardCounts(httpPort);
  const serverFaults = [...failures].filter(([key]) => !CLIENT_FAULTS.test(key));
  expect(serverFaults, `the guard answered server errors; the log:\n${daemon.logs.filter((line) => line.msg === 'a request to the serving thread failed').map((line) => JSON.stringify(line)).join('\n')}`).toEqual([]);
  expect(restarts).toBe(0);
  return failures;
}
