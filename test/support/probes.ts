// Probes a running daemon the way an orchestrator does, for the whole of a test.
/** A probe that has no answer after this long is a failed probe, as an orchestrator's timeout makes it. */
const PROBE_TIMEOUT_MS = 10_000;

/**
 * Times GET /healthz at once and then every 100 ms until stopped; an answer other than 200, or none
 * within PROBE_TIMEOUT_MS, counts as Infinity.
 */
export function probeHealthz(port: number): { readonly timings: number[]; stop(): Promise<void> } {
  const timings: number[] = [];
  let probing = true;
  const prober = (async () => {
    while (probing) {
      const started = performance.now();
      try {
        const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
        await response.text();
        timings.push(response.status === 200 ? performance.now() - started : Number.POSITIVE_INFINITY);
      } catch {
        timings.push(Number.POSITIVE_INFINITY);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    timings,
    stop: async () => {
      probing = false;
      await prober;
    },
  };
}
