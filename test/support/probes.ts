// Probes a running daemon the way an orchestrator does, for the whole of a test.
/** Times GET /healthz every 100 ms until stopped; an answer other than 200 counts as Infinity. */
export function probeHealthz(port: number): { readonly timings: number[]; stop(): Promise<void> } {
  const timings: number[] = [];
  let probing = true;
  const prober = (async () => {
    while (probing) {
      const started = performance.now();
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      await response.text();
      timings.push(response.status === 200 ? performance.now() - started : Number.POSITIVE_INFINITY);
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
