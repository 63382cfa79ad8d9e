// Prometheus metrics (prom-client): what the sync and the API client report, in the text format.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { RetryReason } from './api/errors.js';
import type { ApiObserver } from './api/retry.js';
import type { PageCounts } from './db/mirror-store.js';
import type { RunSummary, SyncObserver } from './sync/sync-organization.js';
import type { WalHealth } from './wal-health.js';

export interface MirrorMetrics extends ApiObserver, SyncObserver {
  readonly registry: Registry;
  /** Exposes the WAL's size and checkpoint starvation, read at each scrape. */
  observeWal(wal: WalHealth, clock: () => Date): void;
}

export function createMetrics(): MirrorMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'threat_mirror_' });
  const runs = new Counter({ name: 'threat_mirror_runs_total', help: 'Runs by organization, stream (threats, reports) and outcome', labelNames: ['organization', 'stream', 'outcome'], registers: [registry] });
  const pages = new Counter({ name: 'threat_mirror_pages_total', help: 'Pages committed', labelNames: ['organization'], registers: [registry] });
  const threats = new Counter({ name: 'threat_mirror_threats_total', help: 'Threat records by what the write did: inserted, updated or rejected', labelNames: ['organization', 'result'], registers: [registry] });
  const requests = new Counter({ name: 'threat_mirror_requests_total', help: 'HTTP requests to the service by outcome (ok, status_NNN, network, timeout, ...)', labelNames: ['organization', 'outcome'], registers: [registry] });
  const retries = new Counter({ name: 'threat_mirror_retries_total', help: 'Requests retried, by reason', labelNames: ['organization', 'reason'], registers: [registry] });
  const rateLimitWait = new Counter({ name: 'threat_mirror_rate_limit_wait_seconds_total', help: 'Time the service asked us to wait with Retry-After', labelNames: ['organization'], registers: [registry] });
  const lastSuccess = new Gauge({ name: 'threat_mirror_last_success_timestamp_seconds', help: 'Unix time of the last successful run', labelNames: ['organization'], registers: [registry] });
  const duration = new Histogram({
    name: 'threat_mirror_run_duration_seconds',
    help: 'Duration of a run of one organization',
    labelNames: ['organization'],
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
    registers: [registry],
  });
  return {
    registry,
    observeWal: (wal, clock) => {
      new Gauge({
        name: 'threat_mirror_wal_bytes',
        help: 'Size of the database -wal file; it grows while a reader holds a read transaction',
        registers: [registry],
        collect() {
          this.set(wal.walBytes());
        },
      });
      new Gauge({
        name: 'threat_mirror_wal_checkpoint_starved_seconds',
        help: 'Seconds since WAL checkpoints stopped completing because a reader holds the WAL (0 while they complete)',
        registers: [registry],
        collect() {
          this.set(wal.starvedSeconds(clock()));
        },
      });
      new Gauge({
        name: 'threat_mirror_wal_checkpoints',
        help: 'WAL checkpoints run between runs since start, by result (complete, or incomplete: held off by a reader)',
        labelNames: ['result'],
        registers: [registry],
        collect() {
          this.set({ result: 'complete' }, wal.checkpoints.complete);
          this.set({ result: 'incomplete' }, wal.checkpoints.incomplete);
        },
      });
    },
    requestFinished: (organization: string, outcome: string) => requests.inc({ organization, outcome }),
    retried: (organization: string, reason: RetryReason) => retries.inc({ organization, reason }),
    rateLimitWaited: (organization: string, ms: number) => rateLimitWait.inc({ organization }, ms / 1000),
    pageCommitted: (organization: string, counts: PageCounts) => {
      pages.inc({ organization });
      threats.inc({ organization, result: 'inserted' }, counts.inserted);
      threats.inc({ organization, result: 'updated' }, counts.updated);
      threats.inc({ organization, result: 'rejected' }, counts.rejected);
    },
    runFinished: (summary: RunSummary) => {
      runs.inc({ organization: summary.organization, stream: summary.stream, outcome: summary.status });
      if (summary.stream !== 'threats') return;
      duration.observe({ organization: summary.organization }, summary.durationMs / 1000);
      if (summary.status === 'succeeded') lastSuccess.set({ organization: summary.organization }, Date.parse(summary.finishedAt) / 1000);
    },
  };
}
