// `threat-mirror verify`: re-fetch closed days, report the drift and repair it, as the one writer.
import type { Command } from '../cli/args.js';
import { withProgress } from '../progress/progress-reporter.js';
import { terminalLineFor } from './io.js';
import { withWriter } from './with-writer.js';
import type { Config } from '../config.js';
import { clockStartingAt, dayOf } from '../lib/days.js';
import type { WriterStart } from '../session/writer-start.js';
import { EXIT_FAILED, EXIT_OK, type Io } from './io.js';
import { formatDrift, verifyOrganization } from './verify.js';
import { verifyRange } from './verify-range.js';

export async function runVerify(command: Extract<Command, { kind: 'verify' }>, config: Config, io: Io, start: WriterStart): Promise<number> {
  const clock = clockStartingAt(config.fixedNow);
  const { from, to } = verifyRange(command, config, dayOf(clock()));
  const line = terminalLineFor(io);
  return withWriter(
    config,
    io,
    start,
    async (mirror, organizations, signal, { logger, clock: writerClock }) => {
      const selected = organizations(command.organization);
      const results = await withProgress(
        {
          label: 'verify',
          modes: ['verify'],
          organizations: selected.map((organization) => organization.name),
          sqlite: mirror.reader,
          clock: writerClock,
          logger,
          line,
          logIntervalMs: config.progressSeconds * 1000,
        },
        () => Promise.all(selected.map((organization) => verifyOrganization(mirror.deps, organization, from, to, signal))),
        (verified) => verified.map((result) => result.summary),
      );
      io.stdout(formatDrift(results));
      const failed = results.some((result) => result.summary.status === 'failed' || result.drift.some((drift) => !drift.repaired));
      return failed ? EXIT_FAILED : EXIT_OK;
    },
    { line },
  );
}
