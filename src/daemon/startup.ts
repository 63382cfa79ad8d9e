// Whether the mirror has had something to read since this process started: the container's health.
//
// Unlike readiness, which follows every run (a failing service turns it off), this latches: once
// every configured organization has a successful threats run in the file (this process's first
// sync committed, or the file already held one from an earlier process), it stays true for the
// life of the process. Readers started on `depends_on: service_healthy` then find data to read,
// and a later outage of the service does not make the sidecar look broken.
import type Database from 'better-sqlite3';
import { errorMessage } from '../lib/errors.js';

export interface Startup {
  readonly started: boolean;
  /** Organizations without a successful threats run yet (empty once started). */
  readonly waitingFor: readonly string[];
  /** Set while the database does not answer. */
  readonly error?: string;
}

/** Returns a check that queries the file until every organization has synced, then answers from memory. */
export function createStartupLatch(sqlite: Database.Database, organizations: readonly string[], onStarted?: () => void): () => Startup {
  let latched: Startup | undefined;
  return () => {
    if (latched) return latched;
    let synced: Set<string>;
    try {
      const rows = sqlite
        .prepare("SELECT DISTINCT organization FROM sync_runs WHERE stream = 'threats' AND status = 'succeeded'")
        .pluck()
        .all() as string[];
      synced = new Set(rows);
    } catch (error) {
      return { started: false, waitingFor: [...organizations], error: `the database does not answer: ${errorMessage(error)}` };
    }
    const waitingFor = organizations.filter((organization) => !synced.has(organization));
    if (waitingFor.length > 0) return { started: false, waitingFor };
    latched = { started: true, waitingFor: [] };
    onStarted?.();
    return latched;
  };
}
