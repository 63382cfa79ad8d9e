// THREAT_MIRROR_ALLOWLIST, read for loadConfig and for the read commands (lookup, export): the file
// read and checked at start, so that a bad line stops the program with exit 2 naming file and line.
import { AllowlistError } from '../allowlist/allowlist-entries.js';
import { type ReadAllowlist, readAllowlist } from '../allowlist/allowlist-file.js';
import { ConfigError } from '../lib/errors.js';
import { type Environment, value } from './read.js';
import { ALLOWLIST } from './variables.js';

/** The file as read at start; undefined when the variable is unset. A bad file is a ConfigError (exit 2) naming the variable, the file and the line. */
export function loadAllowlist(env: Environment, read: (file: string) => ReadAllowlist = readAllowlist): ReadAllowlist | undefined {
  const file = value(env, ALLOWLIST.name);
  if (file === undefined) return undefined;
  try {
    return read(file);
  } catch (error) {
    if (error instanceof AllowlistError) throw new ConfigError(`${ALLOWLIST.name}: ${error.message}`);
    throw error;
  }
}
