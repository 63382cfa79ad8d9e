// Waiting for what another process does (a resolver, the daemon, a served file), by polling.
/**
 * Resolves with the milliseconds `check` took to hold, polling every 50 ms; throws past `timeoutMs`,
 * after printing the last lines of `log` (the process waited on: a resolver, the daemon), so that a
 * timeout says why without a rerun.
 */
export async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number, log?: () => string): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) {
      // On stderr, which the test report shows whole (a failure's summary shows its message's first
      // line); after a turn of the event loop, which reads what the process wrote while a check
      // (dig, spawned synchronously) held the loop.
      await new Promise((resolve) => setTimeout(resolve, 100));
      if (log !== undefined) console.error(`${what}: not within ${timeoutMs} ms; the last lines it logged:\n${log().trimEnd().split('\n').slice(-25).join('\n')}`);
      throw new Error(`${what}: not within ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
