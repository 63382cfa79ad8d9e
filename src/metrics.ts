// Prometheus metrics (prom-client): what the sync and the API client report, in the text format.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { RetryReason } from './api/errors.js';
import type { ApiObserver } from './api/retry.js';
import type { PageCounts } from './db/mirror-store.js';
import type { ExportObserver } from './export/daemon-exports.js';
import type { RunSummary, SyncObserver } from './sync/sync-organization.js';

export interface MirrorMetrics extends ApiObserver, SyncObserver, ExportObserver {
  readonly registry: Registry;
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
  const exportEntries = new Gauge({ name: 'threat_mirror_export_entries', help: 'Entries (hosts, rules or threats) in each export file (THREAT_MIRROR_EXPORTS)', labelNames: ['format', 'path'], registers: [registry] });
  const exportWritten = new Gauge({ name: 'threat_mirror_export_last_write_timestamp_seconds', help: 'Unix time each export file was last written (its mtime)', labelNames: ['format', 'path'], registers: [registry] });
  const exportFailures = new Counter({ name: 'threat_mirror_export_failures_total', help: 'Export refreshes that failed (the previous file is kept)', labelNames: ['format', 'path'], registers: [registry] });
  return {
    registry,
    exportChecked: (format: string, path: string, entries: number, lastWriteMs: number) => {
      exportEntries.set({ format, path }, entries);
      exportWritten.set({ format, path }, lastWriteMs / 1000);
    },
    exportFailed: (format: string, path: string) => exportFailures.inc({ format, path }),
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
