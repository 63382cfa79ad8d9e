// Prometheus metrics (prom-client): what the sync and the API client report, in the text format.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { RetryReason } from '../api/errors.js';
import type { ApiObserver } from '../api/retry.js';
import type { PageCounts } from '../db/writer/page-writer.js';
import { redact } from '../lib/redact.js';
import type { ExportObserver } from '../export/jobs/export-refresher.js';
import type { PlanProgress } from '../progress/plan-progress.js';
import type { RunSummary, SyncObserver } from '../sync/run-contract.js';
import type { LookupBatch } from '../serve/lookup-stats.js';
import type { WalHealth } from './wal-health.js';
import type { EnforcementEvent } from '../serve/protocol.js';
import type { AllowlistObserver } from './daemon-allowlist.js';
import type { EnforcementObserver } from './enforcement.js';
import type { FreshObserver } from './fresh-http.js';
import type { ServingObserver } from './serving-failures.js';
import type { ServingThreadObserver } from './serving-supervisor.js';
import type { SnapshotObserver } from './snapshot-publisher.js';
import { freshOutcome } from '../lookup/fresh-lookup.js';

export interface MirrorMetrics extends ApiObserver, SyncObserver, EnforcementObserver, AllowlistObserver, FreshObserver, ServingObserver, ServingThreadObserver, SnapshotObserver {
  readonly registry: Registry;
  /** Exposes the WAL's size and checkpoint starvation, read at each scrape. */
  observeWal(wal: WalHealth, clock: () => Date): void;
  /** Exposes the running runs' progress, read from the file at each scrape. */
  observeProgress(read: () => readonly PlanProgress[]): void;
  /** The /v1/* requests the HTTP thread answered since its last batch. */
  lookupsAnswered(batch: LookupBatch): void;
  /**
   * At start, before the first scrape: the schedule's threshold and what the file says of each
   * configured organization, so a restart forgets nothing and a mirror that never worked shows at once.
   */
  startedWith(staleAfterSeconds: number, organizations: readonly OrganizationAtStart[], startedAt: Date): void;
}

/** One configured organization as the file has it when the daemon starts. */
export interface OrganizationAtStart {
  readonly organization: string;
  readonly lastSuccessAt: string | null;
  /** Its first incremental run's start; null before any (the daemon's start stands in). */
  readonly firstRunAt: string | null;
  /** Runs that failed since the last success, per stream the daemon runs (sync_runs). */
  readonly failedInARow: Readonly<Partial<Record<'threats' | 'reports', number>>>;
}

type Factory = <L extends string>(name: string, help: string, labelNames: readonly L[]) => Counter<L>;
type GaugeFactory = <L extends string>(name: string, help: string, labelNames: readonly L[]) => Gauge<L>;

export function createMetrics(): MirrorMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'threat_mirror_' });
  // prom-client names these three gauges `_total`, a suffix Prometheus keeps for counters
  // (`promtool check metrics` rejects them); the per-type gauges without it stay.
  for (const name of ['active_handles_total', 'active_requests_total', 'active_resources_total']) registry.removeSingleMetric(`threat_mirror_nodejs_${name}`);
  const counter: Factory = (name, help, labelNames) => new Counter({ name, help, labelNames, registers: [registry] });
  const gauge: GaugeFactory = (name, help, labelNames) => new Gauge({ name, help, labelNames, registers: [registry] });
  return {
    registry,
    ...runMetrics(registry, counter, gauge),
    historyChecked: historyMetrics(gauge),
    ...requestMetrics(counter),
    ...exportMetrics(counter, gauge),
    ...lookupMetrics(registry, counter),
    freshAnswered: freshMetrics(counter),
    ...allowlistMetrics(counter, gauge),
    dnsEvent: dnsMetrics(counter),
    ...servingMetrics(counter),
    ...snapshotMetrics(counter, gauge),
    observeWal: (wal, clock) => observeWal(registry, wal, clock),
    observeProgress: (read) => observeProgress(registry, read),
  };
}

/** The runs and their pages: outcomes, failures in a row, durations, last success, what each page wrote, overdue days. */
function runMetrics(registry: Registry, counter: Factory, gauge: GaugeFactory): SyncObserver & Pick<MirrorMetrics, 'startedWith'> {
  const runs = counter('threat_mirror_runs_total', 'Runs by organization, stream (threats, reports) and outcome', ['organization', 'stream', 'outcome']);
  const pages = counter('threat_mirror_pages_total', 'Pages committed', ['organization']);
  const threats = counter('threat_mirror_threats_total', 'Threat records by what the write did: inserted, updated or rejected', ['organization', 'result']);
  const lastSuccess = gauge('threat_mirror_last_success_timestamp_seconds', 'Unix time of the last successful incremental run of each configured organization; 0 until it has one', ['organization']);
  const everSynced = gauge('threat_mirror_ever_synced', '1 once the organization has had a successful incremental run in this file, 0 until then (from the first scrape: a mirror that never worked shows)', ['organization']);
  const firstRun = gauge(
    'threat_mirror_first_run_timestamp_seconds',
    "Unix time of the organization's first incremental run in this file (this process's start before any): how long the mirror has tried, across restarts",
    ['organization'],
  );
  const staleAfter = gauge('threat_mirror_stale_after_seconds', 'Seconds without a successful run after which the mirror is stale: twice the longest gap of THREAT_MIRROR_SCHEDULE (as /readyz judges)', []);
  const failedInARow = gauge(
    'threat_mirror_consecutive_failed_runs',
    'Runs of the organization and stream that failed since its last success, counted from the file at start (interrupted runs do not count; reconciliation is left out)',
    ['organization', 'stream'],
  );
  const overdueDays = gauge('threat_mirror_reconcile_overdue', 'Mirrored days not re-walked within THREAT_MIRROR_RECONCILE_DAYS, after the last incremental run', ['organization']);
  const buckets = [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600];
  const duration = new Histogram({ name: 'threat_mirror_run_duration_seconds', help: 'Duration of a run of one organization', labelNames: ['organization'], buckets, registers: [registry] });
  return {
    startedWith: (staleAfterSeconds, organizations, startedAt) => {
      staleAfter.set(staleAfterSeconds);
      const now = startedAt.getTime() / 1000;
      for (const { organization, lastSuccessAt, firstRunAt, failedInARow: failed } of organizations) {
        lastSuccess.set({ organization }, lastSuccessAt === null ? 0 : Date.parse(lastSuccessAt) / 1000);
        everSynced.set({ organization }, lastSuccessAt === null ? 0 : 1);
        firstRun.set({ organization }, firstRunAt === null ? now : Date.parse(firstRunAt) / 1000);
        for (const [stream, count] of Object.entries(failed)) failedInARow.set({ organization, stream }, count);
      }
    },
    pageCommitted: (organization: string, counts: PageCounts) => {
      pages.inc({ organization });
      threats.inc({ organization, result: 'inserted' }, counts.inserted);
      threats.inc({ organization, result: 'updated' }, counts.updated);
      threats.inc({ organization, result: 'rejected' }, counts.rejected);
    },
    reconcileChecked: (organization: string, overdue: { readonly days: number }) => overdueDays.set({ organization }, overdue.days),
    runFinished: (summary: RunSummary) => {
      runs.inc({ organization: summary.organization, stream: summary.stream, outcome: summary.status });
      // The incremental sync's health only: the re-walks and the history walk have their own gauges
      // (reconcileChecked, historyMetrics) and status.
      if (summary.mode === 'reconcile' || summary.mode === 'history') return;
      const streamOf = { organization: summary.organization, stream: summary.stream };
      if (summary.status === 'failed') failedInARow.inc(streamOf);
      else if (summary.status !== 'interrupted') failedInARow.set(streamOf, 0);
      // The incremental sync's health: reconciliation runs report through reconcileChecked.
      if (summary.stream !== 'threats') return;
      duration.observe({ organization: summary.organization }, summary.durationMs / 1000);
      if (summary.status !== 'succeeded') return;
      lastSuccess.set({ organization: summary.organization }, Date.parse(summary.finishedAt) / 1000);
      everSynced.set({ organization: summary.organization }, 1);
    },
  };
}

/**
 * The walk toward the configured start of the history: the days it still lacks after each run
 * (named without "days": `promtool check metrics` asks for seconds after a unit).
 */
function historyMetrics(gauge: GaugeFactory): NonNullable<SyncObserver['historyChecked']> {
  const missing = gauge(
    'threat_mirror_history_missing',
    'Days from the configured start of the history (THREAT_MIRROR_HISTORY_FROM, else the last THREAT_MIRROR_INITIAL_DAYS days) before sync_status.history_from, the first day from which every day is held whole: what status counts down, after the last run; absent while the walk is off (THREAT_MIRROR_HISTORY_MAX_REQUESTS=0)',
    ['organization'],
  );
  return (organization, history) => missing.set({ organization }, history.missingDays);
}

/** What the API client reports: requests by outcome, retries, Retry-After waits, deprecation notices. */
function requestMetrics(counter: Factory): ApiObserver {
  const requests = counter('threat_mirror_requests_total', 'HTTP requests to the service by outcome (ok, status_NNN, network, timeout, ...)', ['organization', 'outcome']);
  const retries = counter('threat_mirror_retries_total', 'Requests retried, by reason', ['organization', 'reason']);
  const rateLimitWait = counter('threat_mirror_rate_limit_wait_seconds_total', 'Time the service asked us to wait with Retry-After', ['organization']);
  const deprecations = counter(
    'threat_mirror_deprecation_notices_total',
    'Responses that carried a Deprecation or Sunset header (RFC 8594), by endpoint; see the warning in the log and `threat-mirror status`',
    ['endpoint'],
  );
  return {
    requestFinished: (organization: string, outcome: string) => requests.inc({ organization, outcome }),
    retried: (organization: string, reason: RetryReason) => retries.inc({ organization, reason }),
    rateLimitWaited: (organization: string, ms: number) => rateLimitWait.inc({ organization }, ms / 1000),
    // The endpoint label is one of the client's fixed paths; redacted all the same, as every label is text that leaves.
    deprecationAnnounced: (endpoint: string) => deprecations.inc({ endpoint: redact(endpoint) }),
  };
}

/** The export files and the zone of the export index. */
function exportMetrics(counter: Factory, gauge: GaugeFactory): ExportObserver & Pick<MirrorMetrics, 'zoneSerial'> {
  const exportEntries = gauge('threat_mirror_export_entries', 'Entries (hosts, rules or threats) in each export file (THREAT_MIRROR_EXPORTS)', ['format', 'path']);
  const exportWritten = gauge('threat_mirror_export_last_write_timestamp_seconds', 'Unix time each export file was last written (its mtime)', ['format', 'path']);
  const exportFailures = counter('threat_mirror_export_failures_total', 'Export refreshes that failed (the previous file is kept)', ['format', 'path']);
  const zoneSerial = gauge('threat_mirror_zone_serial', 'SOA serial of the response policy zone (the export index)', []);
  const zoneHosts = gauge('threat_mirror_zone_hosts', 'Hosts blocked as a whole in the export index (the zone lists those short enough for a zone name)', []);
  return {
    zoneSerial: (serial: number, hosts: number) => {
      zoneSerial.set(serial);
      zoneHosts.set(hosts);
    },
    exportChecked: (format: string, path: string, entries: number, lastWriteMs: number) => {
      exportEntries.set({ format, path }, entries);
      exportWritten.set({ format, path }, lastWriteMs / 1000);
    },
    exportFailed: (format: string, path: string) => exportFailures.inc({ format, path }),
  };
}

/** Fresh lookups (/v1/lookup?fresh=1): each organization's query by how it ended, and the matching threats the service listed. */
function freshMetrics(counter: Factory): FreshObserver['freshAnswered'] {
  const queries = counter(
    'threat_mirror_fresh_queries_total',
    'Fresh lookup queries of one organization, one per value asked (a value answered from a listing another value of its answer read counts, with no request), by outcome: refreshed, partial (more pages than a lookup reads), capped (over THREAT_MIRROR_FRESH_MAX_RPS, not sent), failed (an error or the deadline)',
    ['organization', 'outcome'],
  );
  const matches = counter('threat_mirror_fresh_matches_total', 'Threats matching a looked-up value that fresh lookups found listed by the service (the mirror holds them at its next sync)', ['organization']);
  return (answer) => {
    for (const query of answer.queries) queries.inc({ organization: query.organization, outcome: freshOutcome(query) });
    for (const match of answer.matches) matches.inc({ organization: match.organization });
  };
}

/** The /v1/* requests the HTTP thread answered, by status, and how long each took. */
function lookupMetrics(registry: Registry, counter: Factory): Pick<MirrorMetrics, 'lookupsAnswered'> {
  const lookups = counter('threat_mirror_lookup_requests_total', 'Requests to /v1/* (lookups) answered by the HTTP thread, by HTTP status', ['code']);
  const lookupDuration = new Histogram({
    name: 'threat_mirror_lookup_duration_seconds',
    help: 'Time from a /v1/* request to the last byte of its answer, on the HTTP thread',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return {
    lookupsAnswered: (batch) => {
      for (const [code, count] of Object.entries(batch.codes)) lookups.inc({ code }, count);
      for (const seconds of batch.seconds) lookupDuration.observe(seconds);
    },
  };
}

/** THREAT_MIRROR_ALLOWLIST as the daemon follows it: the version in use, since when, and whether the file can be used now. */
function allowlistMetrics(counter: Factory, gauge: GaugeFactory): AllowlistObserver {
  const entries = gauge('threat_mirror_allowlist_entries', 'Entries of the THREAT_MIRROR_ALLOWLIST version in use, by file', ['file']);
  const applied = gauge('threat_mirror_allowlist_last_applied_timestamp_seconds', 'Unix time the allowlist in use was applied (at start, or when the file changed to it), by file', ['file']);
  const problem = gauge('threat_mirror_allowlist_problem', '1 while the allowlist file cannot be used as it is now (malformed, missing, unreadable): the previous list stays in use; 0 otherwise', ['file']);
  const failures = counter('threat_mirror_allowlist_failures_total', 'Versions of the allowlist file that could not be used (each distinct problem once)', ['file']);
  let file = '';
  return {
    allowlistState: (state) => {
      file = state.file;
      entries.set({ file }, state.list.entries.length);
      applied.set({ file }, state.appliedAt.getTime() / 1000);
      problem.set({ file }, state.problem === undefined ? 0 : 1);
    },
    allowlistFailed: () => failures.inc({ file }),
  };
}

/** What the DNS primary on the serving thread reports: queries, malformed messages, transfers, NOTIFYs. */
function dnsMetrics(counter: Factory): MirrorMetrics['dnsEvent'] {
  const dnsQueries = counter('threat_mirror_dns_queries_total', 'DNS queries answered, by kind (soa, ns, axfr, ixfr, other) and response code', ['kind', 'rcode']);
  const dnsMalformed = counter('threat_mirror_dns_malformed_total', 'DNS messages that were no query (garbage, responses), dropped', ['transport']);
  const dnsTransfers = counter('threat_mirror_dns_transfers_total', 'Zone transfers sent whole, full or incremental', ['kind']);
  const dnsTransferRecords = counter('threat_mirror_dns_transfer_records_total', 'Records sent in zone transfers', ['kind']);
  const dnsTcpClosed = counter(
    'threat_mirror_dns_tcp_closed_total',
    'DNS TCP connections the primary closed itself: full (no place at accept for its address or pool), idle (no whole query in time), slow-reader (answers not read in time), lifetime (outside THREAT_MIRROR_DNS_ALLOW: its short life ended)',
    ['reason'],
  );
  const dnsNotify = counter('threat_mirror_dns_notify_total', 'NOTIFYs by target and outcome (answered, or unanswered after every retransmission)', ['target', 'outcome']);
  return (event: EnforcementEvent) => {
    if (event.type === 'dns-answered') dnsQueries.inc({ kind: event.kind, rcode: event.rcode });
    else if (event.type === 'dns-malformed') dnsMalformed.inc({ transport: event.transport });
    else if (event.type === 'dns-tcp-closed') dnsTcpClosed.inc({ reason: event.reason });
    else if (event.type === 'dns-transferred') {
      dnsTransfers.inc({ kind: event.kind });
      dnsTransferRecords.inc({ kind: event.kind }, event.records);
    } else if (event.type === 'dns-notified') dnsNotify.inc({ target: event.target, outcome: event.outcome });
  };
}

/** The serving thread's listeners: handler failures its guard answered. */
function servingMetrics(counter: Factory): ServingObserver & ServingThreadObserver {
  const failures = counter(
    'threat_mirror_serving_errors_total',
    'Requests (HTTP) and messages (DNS) whose handler failed on the serving thread, answered by its guard: by listener (http, dns-udp, dns-tcp), route and answer (400, 500, FORMERR, SERVFAIL, closed)',
    ['listener', 'route', 'answer'],
  );
  const restarts = counter('threat_mirror_serving_thread_restarts_total', 'Times the serving thread (lookups, feeds, the DNS primary) was started again after it died; /readyz names the cause while it is down', []);
  return {
    servingFailed: (failure) => failures.inc({ listener: failure.listener, route: failure.route, answer: failure.answer }),
    servingThreadRestarted: () => restarts.inc(),
  };
}

/** THREAT_MIRROR_SNAPSHOT: publishes that failed, and when the snapshot was last published. */
function snapshotMetrics(counter: Factory, gauge: GaugeFactory): SnapshotObserver {
  const failures = counter('threat_mirror_snapshot_failures_total', 'Snapshot publishes (THREAT_MIRROR_SNAPSHOT) that failed; the previous snapshot stays', []);
  const published = gauge('threat_mirror_snapshot_last_publish_timestamp_seconds', 'Unix time the snapshot at THREAT_MIRROR_SNAPSHOT was last published (its mtime); 0 while there is none', []);
  return {
    snapshotPublished: (atMs) => published.set(atMs / 1000),
    snapshotFailed: () => failures.inc(),
  };
}

/** The progress of each running threats run, in [0, 1]; no series for an organization between runs. */
function observeProgress(registry: Registry, read: () => readonly PlanProgress[]): void {
  new Gauge({
    name: 'threat_mirror_run_progress_ratio',
    help: "The running run's days walked to their end over the days it covers, by organization and mode (absent between runs)",
    labelNames: ['organization', 'mode'],
    registers: [registry],
    collect() {
      this.reset();
      for (const progress of read()) this.set({ organization: progress.organization, mode: progress.mode }, progress.fraction);
    },
  });
}

/** The WAL's gauges, each read from `wal` at scrape time. */
function observeWal(registry: Registry, wal: WalHealth, clock: () => Date): void {
  const readAtScrape = (name: string, help: string, labelNames: readonly string[], read: (gauge: Gauge) => void): void => {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        read(this);
      },
    });
  };
  readAtScrape('threat_mirror_wal_bytes', 'Size of the database -wal file; it grows while a reader holds a read transaction', [], (gauge) => gauge.set(wal.walBytes()));
  readAtScrape(
    'threat_mirror_wal_checkpoint_starved_seconds',
    'Seconds since WAL checkpoints stopped completing because a reader holds the WAL (0 while they complete)',
    [],
    (gauge) => gauge.set(wal.starvedSeconds(clock())),
  );
  readAtScrape(
    'threat_mirror_wal_checkpoints',
    'WAL checkpoints run between runs since start, by result (complete, or incomplete: held off by a reader)',
    ['result'],
    (gauge) => {
      gauge.set({ result: 'complete' }, wal.checkpoints.complete);
      gauge.set({ result: 'incomplete' }, wal.checkpoints.incomplete);
    },
  );
}
