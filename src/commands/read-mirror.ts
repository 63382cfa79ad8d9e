// Which organizations a read command (lookup, status) answers for: `--org`, else those the
// environment configures (THREAT_MIRROR_ORG / THREAT_MIRROR_ORGS), else every one the file holds.
// An --org that is neither configured nor held is a usage error, as for export: a misspelt name
// must never be answered "not blocked" or "nothing wrong".
import { ConfigError } from '../lib/errors.js';

export function organizationsAskedAbout(only: string | undefined, configured: readonly string[] | undefined, held: readonly string[]): string[] {
  if (only === undefined) return [...(configured ?? held)];
  if (configured?.includes(only) || held.includes(only)) return [only];
  const holds = held.length === 0 ? 'it holds none yet' : `it holds ${held.join(', ')}`;
  const names = configured === undefined ? '' : `; configured: ${configured.join(', ')}`;
  throw new ConfigError(`--org: "${only}" is not an organization of this file (${holds}${names})`);
}
