// `threat-mirror verify`: re-fetch closed days, report the drift and repair it, as the one writer.
// The days were resolved and checked by the entry (cli/command-checks.ts); the engine is sync/verify-threats.ts.
import type { Config } from '../config.js';
import { withProgress } from '../progress/progress-reporter.js';
import type { WriterStart } from '../session/writer-start.js';
import { type Side, type VerifyResult, verifyOrganization } from '../sync/verify-threats.js';
import type { VerifyCommand } from './command.js';
import { EXIT_FAILED, EXIT_OK, type Io, terminalLineFor } from './io.js';
import { withWriter } from './with-writer.js';

export async function runVerify(command: VerifyCommand, config: Config, io: Io, start: WriterStart): Promise<number> {
  const { from, to } = command;
  const line = terminalLineFor(io);
  return withWriter(
    config,
    io,
    start,
    async (mirror, organizations, signal, { progress }) => {
      const selected = organizations(command.organization);
      const results = await withProgress(
        progress('verify', ['verify'], selected),
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

/** Per organization the days checked and drifted, and a table of the days that drifted: service, mirror, ledger, now. */
function formatDrift(results: readonly VerifyResult[]): string {
  const lines: string[] = [];
  const cell = (value: Side): string => (value.records === null ? '(none)' : `${value.records} ${value.hash?.slice(0, 8) ?? ''}`);
  for (const result of results) {
    const { summary } = result;
    if (summary.status !== 'succeeded') {
      lines.push(`${summary.organization}: verify ${summary.status}: ${summary.error ?? ''}`);
      continue;
    }
    lines.push(`${summary.organization}: ${result.days} days ${summary.rangeStart}..${summary.rangeEnd} checked, ${result.drift.length} drifted, ${summary.pages} pages fetched`);
    if (result.drift.length === 0) continue;
    const header = ['day', 'service', 'mirror', 'ledger', 'now'];
    const rows = result.drift.map((drift) => [drift.day, cell(drift.service), cell(drift.mirror), cell(drift.ledger), drift.repaired ? 'repaired' : 'STILL DIFFERS']);
    const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
    const format = (row: string[]): string => `  ${row.map((value, column) => value.padEnd(widths[column] ?? 0)).join('  ')}`.trimEnd();
    lines.push(format(header));
    for (const row of rows) lines.push(format(row));
  }
  return `${lines.join('\n')}\n`;
}
