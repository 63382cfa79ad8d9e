// What status and lookup read through: the mirror opened read-only, and the organizations asked
// about judged now (lookup/sync-judgement.ts). They are `--org`, else those the environment
// configures (THREAT_MIRROR_ORG / THREAT_MIRROR_ORGS), else every one the file holds. An --org that
// is neither configured nor held is a usage error, as for export: a misspelt name must never be
// answered "not blocked" or "nothing wrong".
import type { ReadConfig } from '../config.js';
import { openDatabaseReadOnly } from '../db/open-database.js';
import { organizationStanding, retiredMessage } from '../db/read/answered-organizations.js';
import { SyncHealthReads } from '../db/read/sync-health.js';
import type { Database } from '../db/sqlite.js';
import { clockStartingAt } from '../lib/days.js';
import { ConfigError } from '../lib/errors.js';
import { type OrganizationSync, readSync } from '../lookup/sync-judgement.js';
import { databaseExists, EXIT_USAGE, type Io } from './io.js';

export interface JudgedMirror {
  readonly sqlite: Database;
  /** Those asked about, each as judged at `now`: synced and fresh, or why the mirror cannot vouch. */
  readonly organizations: readonly OrganizationSync[];
  /** On the writer's clock: THREAT_MIRROR_NOW when a test or a replay fixes it. */
  readonly now: Date;
}

/** `read`'s exit code; 2 (and a message naming the variable) when there is no mirror at THREAT_MIRROR_DB. */
export async function readJudgedMirror(config: ReadConfig, only: string | undefined, io: Io, read: (mirror: JudgedMirror) => number | Promise<number>): Promise<number> {
  const now = clockStartingAt(config.fixedNow)();
  if (!databaseExists(config.dbPath, io)) return EXIT_USAGE;
  const opened = openDatabaseReadOnly(config.dbPath);
  try {
    const reads = new SyncHealthReads(opened.sqlite);
    const retiredAt = only === undefined ? null : retiredSince(opened.sqlite, only);
    const organizations = readSync(reads, organizationsAskedAbout(only, config.organizationNames, reads.heldOrganizations(), retiredAt), now);
    return await read({ sqlite: opened.sqlite, organizations, now });
  } finally {
    opened.close();
  }
}

function retiredSince(sqlite: Database, organization: string): string | null {
  const standing = organizationStanding(sqlite, organization);
  return standing.held ? standing.retiredAt : null;
}

/** `retiredAt`: when `only` was retired; a reader configured with it still asks (and cannot vouch for it). */
function organizationsAskedAbout(only: string | undefined, configured: readonly string[] | undefined, held: readonly string[], retiredAt: string | null): string[] {
  if (only === undefined) return [...(configured ?? held)];
  if (configured?.includes(only) || held.includes(only)) return [only];
  if (retiredAt !== null) throw new ConfigError(`--org: ${retiredMessage(only, retiredAt)}`);
  const holds = held.length === 0 ? 'it holds none yet' : `it holds ${held.join(', ')}`;
  const names = configured === undefined ? '' : `; configured: ${configured.join(', ')}`;
  throw new ConfigError(`--org: "${only}" is not an organization of this file (${holds}${names})`);
}
