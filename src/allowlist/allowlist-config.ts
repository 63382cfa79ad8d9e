// THREAT_MIRROR_ALLOWLIST, read for loadConfig and for the read commands (lookup, export): the file
// read and checked at start, so that a bad line stops the program with exit 2 naming file and line.
import { ConfigError } from '../lib/errors.js';
import { AllowlistError } from './allowlist-entries.js';
import { type ReadAllowlist, readAllowlist } from './allowlist-file.js';

export const ALLOWLIST_VARIABLE = 'THREAT_MIRROR_ALLOWLIST';

/** Its row in `--help` (config.ts ENVIRONMENT_VARIABLES). */
export const ALLOWLIST_VARIABLES: ReadonlyArray<{ name: string; default: string; meaning: string }> = [
  {
    name: ALLOWLIST_VARIABLE,
    default: '(none)',
    meaning:
      'A file of local exceptions, one a line (URL, host, address, e-mail or exact content; "# reason" after it): lookup, exports and the zone treat what it allows as not blocked; the daemon re-reads it within 5 s of a change (docs/lookup.md)',
  },
];

type Environment = Readonly<Record<string, string | undefined>>;

/** The file as read at start; undefined when the variable is unset. A bad file is a ConfigError (exit 2) naming the variable, the file and the line. */
export function loadAllowlist(env: Environment, read: (file: string) => ReadAllowlist = readAllowlist): ReadAllowlist | undefined {
  const file = env[ALLOWLIST_VARIABLE]?.trim();
  if (file === undefined || file === '') return undefined;
  try {
    return read(file);
  } catch (error) {
    if (error instanceof AllowlistError) throw new ConfigError(`${ALLOWLIST_VARIABLE}: ${error.message}`);
    throw error;
  }
}
