// `--once`, `--backfill` and the daemon: sync the configured organizations as the one writer.
import { withProgress } from '../progress/progress-reporter.js';
import { terminalLineFor } from './io.js';
import { withWriter } from './with-writer.js';
import type { Config } from '../config.js';
import { dayOf } from '../lib/days.js';
import type { RunSummary, SyncRequest } from '../sync/run-contract.js';
import type { WriterStart } from '../session/writer-start.js';
import { syncOrganizations } from '../sync/sync-all.js';
import type { SyncCommand } from './command.js';
import { EXIT_FAILED, EXIT_OK, type Io } from './io.js';

/** `start`: the writer lock and thread, started by the entry before it loaded this module. */
export async function runSync(command: SyncCommand, config: Config, io: Io, start: WriterStart): Promise<number> {
  if (command.kind === 'daemon') {
    // Loaded for the daemon only: a one-shot run serves no /metrics, and importing prom-client
    // is a good part of its start-up.
    const [{ createMetrics }, { runDaemon }] = await Promise.all([import('../daemon/metrics.js'), import('../daemon/daemon.js')]);
    const metrics = createMetrics();
    return withWriter(
      config,
      io,
      start,
      async (mirror, organizations, signal, { logger, clock }) => {
        await runDaemon({ config, mirror, metrics, organizations: organizations(undefined), logger, clock, signal });
        return EXIT_OK;
      },
      { metrics },
    );
  }
  const line = terminalLineFor(io);
  return withWriter(
    config,
    io,
    start,
    async (mirror, organizations, signal, { clock, progress }) => {
      const selected = organizations('organization' in command ? command.organization : undefined);
      const request: SyncRequest =
        command.kind === 'backfill' ? { mode: 'backfill', from: command.from, to: command.to ?? dayOf(clock()) } : { mode: 'incremental' };
      const summaries = await withProgress(
        progress(command.kind === 'backfill' ? 'backfill' : 'sync', [request.mode], selected),
        () => syncOrganizations(mirror.deps, selected, request, signal),
        (runs) => runs,
      );
      reportFailures(summaries, io);
      return summaries.some((summary) => summary.status === 'failed') ? EXIT_FAILED : EXIT_OK;
    },
    { line },
  );
}

/** Logs already carry each failure; stderr repeats them briefly for a person at a terminal. */
function reportFailures(summaries: readonly RunSummary[], io: Io): void {
  for (const summary of summaries) {
    if (summary.status === 'failed') io.stderr(`threat-mirror: organization "${summary.organization}" failed: ${summary.error}\n`);
  }
}
