// The days `verify` checks: apart from its runner so that the command line is checked without loading the sync.
import type { Command } from '../cli/args.js';
import type { Config } from '../config.js';
import { addDays } from '../lib/days.js';

/** Default: the last THREAT_MIRROR_INITIAL_DAYS closed days. */
export function verifyRange(command: Extract<Command, { kind: 'verify' }>, config: Pick<Config, 'initialDays'>, today: string): { from: string; to: string } {
  const to = command.to ?? addDays(today, -1);
  return { from: command.from ?? addDays(to, -(config.initialDays - 1)), to };
}
