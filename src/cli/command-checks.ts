// The command line checked against the configuration before a writing command starts its writer:
// an --org nobody configured, a --from after today, a verify of a day not yet closed exit 2.
import type { SyncCommand, VerifyCommand, WritingCommand } from '../commands/command.js';
import type { Config } from '../config.js';
import { addDays, clockStartingAt, dayOf } from '../lib/days.js';
import { ConfigError } from '../lib/errors.js';

/** The command as it will run: verify's days resolved (default: the last THREAT_MIRROR_INITIAL_DAYS closed days). */
export function assertCommandFitsConfig(command: WritingCommand, config: Config): SyncCommand | VerifyCommand {
  if ('organization' in command && command.organization !== undefined) {
    const names = config.organizations.map((organization) => organization.name);
    if (!names.includes(command.organization)) {
      throw new ConfigError(`--org: "${command.organization}" is not a configured organization (configured: ${names.join(', ')})`);
    }
  }
  const today = dayOf(clockStartingAt(config.fixedNow)());
  if (command.kind === 'backfill') {
    if (command.from > today) throw new ConfigError(`--from ${command.from} is after today (${today}, UTC)`);
    if (command.to !== undefined && command.to > today) throw new ConfigError(`--to ${command.to} is after today (${today}, UTC)`);
  }
  if (command.kind !== 'verify') return command;
  const to = command.to ?? addDays(today, -1);
  const from = command.from ?? addDays(to, -(config.initialDays - 1));
  const closedOnly = `verify checks closed days only, the last is ${addDays(today, -1)} (UTC)`;
  if (to >= today) throw new ConfigError(`--to ${to}: ${closedOnly}`);
  // Without --to the range ends yesterday: a --from after it is the flag to name, not a --to nobody gave.
  if (from > to) throw new ConfigError(command.to === undefined ? `--from ${from}: ${closedOnly}` : `--from ${from} is after --to ${to}`);
  return { ...command, from, to };
}
