// Fresh lookups for /v1/lookup?fresh=1 (issue 30), on the main thread: the HTTP thread asks, and
// the service is queried here with the sync's own client options (the keys never reach the HTTP
// thread, and each key's budget of requests in flight is the sync's), under a per-key cap on
// requests per second (THREAT_MIRROR_FRESH_MAX_RPS) so lookups never starve the sync. Which
// organization is read whole (one the mirror cannot vouch for) follows the judgement the HTTP
// thread sends with the question: the one its verdict is judged by, so the two never disagree.
import type { Config } from '../config.js';
import { dayOf } from '../lib/days.js';
import { askValues } from '../lookup/fresh-document.js';
import { type FreshAnswer, FreshCap, freshOrganization } from '../lookup/fresh-lookup.js';
import type { FreshAsker } from '../serve/serving-client.js';
import type { SyncDeps } from '../sync/run-contract.js';

/** Told each fresh answer (the daemon's metrics). */
export interface FreshObserver {
  freshAnswered(answer: FreshAnswer): void;
}

/** `deps`: the sync's client options and clock (the writer session's). */
export function createFreshAsker(config: Config, { api, clock }: Pick<SyncDeps, 'api' | 'clock'>, observer?: FreshObserver): FreshAsker {
  const cap = new FreshCap(config.freshMaxRps);
  return async (values, judged, asker) => {
    // Only organizations this daemon mirrors: the serving thread knows no others, and holds no keys.
    const organizations = judged.flatMap((judgement) => {
      const configured = config.organizations.find((organization) => organization.name === judgement.organization);
      return configured === undefined ? [] : [freshOrganization(configured, judgement)];
    });
    // The answer's own signal, aborted with the thread's: a request's deadline is AbortSignal.any
    // of it, and Node 20 and 22 keep every such signal listed on its sources until they are
    // collected; on the thread's signal, which lives as long as the thread, that grew without bound.
    const answer = new AbortController();
    const gone = (): void => answer.abort(asker.reason);
    if (asker.aborted) gone();
    else asker.addEventListener('abort', gone, { once: true });
    try {
      // Counted as each value is answered; values left unasked (the thread gone) are not counted.
      return await askValues(
        values,
        organizations,
        {
          api,
          today: dayOf(clock()),
          initialDays: config.initialDays,
          signal: answer.signal,
          admit: (organization) => cap.admit(organization.apiKey.reveal()),
          spent: (organization, requests) => cap.spend(organization.apiKey.reveal(), requests),
        },
        (answered) => observer?.freshAnswered(answered),
      );
    } finally {
      asker.removeEventListener('abort', gone);
    }
  };
}
