// Fresh lookups for /v1/lookup?fresh=1 (issue 30), on the main thread: the HTTP thread asks, and
// the service is queried here with the sync's own client options (the keys never reach the HTTP
// thread, and each key's budget of requests in flight is the sync's), under a per-key cap on
// requests per second (THREAT_MIRROR_FRESH_MAX_RPS) so lookups never starve the sync.
import type { Config } from '../config.js';
import { SyncHealthReads } from '../db/read/sync-health.js';
import { dayOf } from '../lib/days.js';
import { askService, type FreshAnswer, FreshCap, freshOrganization } from '../lookup/fresh-lookup.js';
import { readSync } from '../lookup/sync-judgement.js';
import type { FreshAsker } from '../serve/serving-client.js';
import type { WriterSession } from '../session/writer-session.js';


/** Told each fresh answer (the daemon's metrics). */
export interface FreshObserver {
  freshAnswered(answer: FreshAnswer): void;
}

export function createFreshAsker(config: Config, session: WriterSession, observer?: FreshObserver): FreshAsker {
  const cap = new FreshCap(config.freshMaxRps);
  const { api, clock } = session.deps;
  const health = new SyncHealthReads(session.reader);
  return async (value, only) => {
    const configured = config.organizations.filter((organization) => only === undefined || organization.name === only);
    // Judged as the serving thread judges the verdicts: one the mirror cannot vouch for is read whole if it can be.
    const judged = readSync(
      health,
      configured.map((organization) => organization.name),
      clock(),
    );
    const organizations = configured.map((organization, index) => freshOrganization(organization, judged[index] ?? { completeThrough: null, problems: ['not judged'] }));
    const answer = await askService(value, organizations, {
      api,
      today: dayOf(clock()),
      initialDays: config.initialDays,
      admit: (organization) => cap.admit(organization.apiKey.reveal()),
      spent: (organization, requests) => cap.spend(organization.apiKey.reveal(), requests),
    });
    observer?.freshAnswered(answer);
    return answer;
  };
}
