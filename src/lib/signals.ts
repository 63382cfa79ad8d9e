// SIGTERM and SIGINT for a process that writes: stop gracefully first, never hang.

/** How long a graceful stop may take before the process exits anyway. */
const FORCED_EXIT_AFTER_MS = 9_000;

/** Exit code when the graceful stop overruns (EXIT_FAILED). */
const EXIT_AFTER_OVERRUN = 1;

/**
 * First signal: stop gracefully (abort `shutdown`). Second: exit at once. Either way, no more than
 * FORCED_EXIT_AFTER_MS. Returns the function that removes the handlers.
 */
export function installSignalHandlers(shutdown: AbortController, logger: { warn: (message: string) => void }, flush: () => void): () => void {
  const onSignal = (signal: NodeJS.Signals): void => {
    if (shutdown.signal.aborted) {
      logger.warn(`${signal} again: exiting at once`);
      flush();
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    logger.warn(`${signal}: stopping once the pages already fetched are committed; send it again to exit at once`);
    shutdown.abort(new Error(`stopped by ${signal}`));
    setTimeout(() => {
      logger.warn(`graceful stop took longer than ${FORCED_EXIT_AFTER_MS} ms: exiting`);
      flush();
      process.exit(EXIT_AFTER_OVERRUN);
    }, FORCED_EXIT_AFTER_MS).unref();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  };
}
