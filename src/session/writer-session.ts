// What a writing command opens, in order, and closes in reverse: the writer lock and the writer
// thread (which opens and migrates the file: the only writable connection; writer-start.ts), the
// main thread's read-only connection, and the API client's options (api/client-options.ts).
import type { Logger } from 'pino';
import { apiOptionsFor } from '../api/client-options.js';
import type { ApiObserver } from '../api/retry.js';
import type { Config } from '../config.js';
import { openDatabaseReadOnly } from '../db/open-database.js';
import { MirrorReads } from '../db/read/mirror-reads.js';
import { LOOKBACK_DAYS_KEY, RECONCILE_DAYS_KEY } from '../db/setting-keys.js';
import type { Database } from '../db/sqlite.js';
import type { ConfiguredOrganizations } from '../db/writer/configured-organizations.js';
import type { MirroredAllowlist } from '../db/writer/protocol.js';
import type { WriterClient } from '../db/writer/writer-client.js';
import type { Clock } from '../lib/days.js';
import { releaseAll } from '../lib/release-all.js';
import type { SyncDeps, SyncObserver } from '../sync/run-contract.js';
import { ServiceNotices } from './service-notices.js';
import type { StartedWriter } from './writer-start.js';

export interface WriterSession {
  readonly deps: SyncDeps;
  /** The main thread's read-only connection: progress, readiness, what the sync reads. */
  readonly reader: Database;
  /** Waits for the pages handed to the writer, then closes the reader, the writer thread and the lock. */
  close(): Promise<void>;
}

export interface WriterSessionOptions {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly apiObserver?: ApiObserver | undefined;
  readonly syncObserver?: SyncObserver | undefined;
}

/** Waits for the writer thread started by startWriter, then opens what the sync reads with. */
export async function openWriterSession({ writer, releasers }: StartedWriter, options: WriterSessionOptions): Promise<WriterSession> {
  const { config, logger, clock } = options;
  // Released in reverse order of acquisition, also when a later step fails, each whatever the others do.
  try {
    const started = await writer.ready;
    if (started.abandonedRuns > 0) logger.warn({ runs: started.abandonedRuns }, 'marked runs of a process that stopped mid-way as interrupted; their plans resume now');
    if (started.backfilled > 0) logger.info({ threats: started.backfilled }, 'derived lookup columns and change_seq for threats written by an earlier version');
    // A file at rest in rollback mode beside a reader holding a read transaction: said once, never again.
    if (started.walSwitch !== null && started.walSwitch.waitedMs >= 1000) {
      logger.warn(
        { from: started.walSwitch.from, waitedMs: started.walSwitch.waitedMs },
        `the file was at rest in ${started.walSwitch.from} journal mode (an older version's stop, or a copied snapshot) and a reader held it: the start waited ${started.walSwitch.waitedMs} ms to switch it to WAL; it rests in WAL mode from now on`,
      );
    }
    if (started.lookupRules !== null) {
      logger.info({ threats: started.lookupRules.rows, changed: started.lookupRules.changed }, 'derived the lookup columns again under the current rules (an earlier version wrote them)');
    }
    // Readers see in sync_status how far back each run re-scans (only those days can show
    // removals), and how old a day's last walk may be before it counts as overdue.
    const now = clock().toISOString();
    const [, , , configured] = await Promise.all([
      writer.call('recordSetting', { key: LOOKBACK_DAYS_KEY, value: String(config.lookbackDays), now }),
      writer.call('recordSetting', { key: RECONCILE_DAYS_KEY, value: String(config.reconcileDays), now }),
      // SQL readers (enforced_threats) see THREAT_MIRROR_ALLOWLIST as this process has it; unset empties the table.
      writer.call('mirrorAllowlist', { list: mirroredAllowlist(config, now), now }),
      // Every reader answers for the organizations this process is configured with, and no other.
      writer.call('configureOrganizations', { organizations: config.organizations.map((organization) => organization.name), now }),
    ]);
    logConfiguredOrganizations(configured, logger);
    // Closed before the writer: its last close then finds no other connection and leaves the
    // file in rollback mode for read-only mounts (writer-connection.ts).
    const reader = openDatabaseReadOnly(config.dbPath);
    releasers.push(() => reader.close());
    return { deps: syncDepsFor(writer, new MirrorReads(reader.sqlite), options), reader: reader.sqlite, close: () => releaseAll(releasers) };
  } catch (error) {
    await releaseAll(releasers);
    throw error;
  }
}

/** An organization left out of the configuration, or configured again: said once, at the start that changed it. */
function logConfiguredOrganizations({ retired, returned }: ConfiguredOrganizations, logger: Logger): void {
  for (const { organization, hidden } of retired) {
    logger.warn(
      { organization, hidden },
      `organization "${organization}" is no longer configured (THREAT_MIRROR_ORG / THREAT_MIRROR_ORGS): its ${hidden} threats are hidden from every answer and kept; configure it again to show them and go on syncing it`,
    );
  }
  for (const { organization, shown } of returned) {
    logger.info({ organization, shown }, `organization "${organization}" is configured again: its ${shown} threats are shown and its runs go on from its checkpoints`);
  }
}

/** The list read at start, in use from now on; null when THREAT_MIRROR_ALLOWLIST is unset. */
function mirroredAllowlist({ allowlist }: Config, now: string): MirroredAllowlist | null {
  if (allowlist === undefined) return null;
  const { file, version, entries } = allowlist.list;
  return { file, version, appliedAt: now, entries };
}

/** What the engine is given: the writer, the reads, the clock, the log, its settings and the API client's options, read from the config. */
function syncDepsFor(writer: WriterClient, reads: MirrorReads, { config, logger, clock, apiObserver, syncObserver }: WriterSessionOptions): SyncDeps {
  return {
    writer,
    reads,
    clock,
    logger,
    observer: syncObserver,
    settings: {
      initialDays: config.initialDays,
      historyFrom: config.historyFrom,
      historyMaxRequests: config.historyMaxRequests,
      lookbackDays: config.lookbackDays,
      concurrency: config.concurrency,
      mirrorReports: config.reports,
      reportsRecentDays: config.reportsRecentDays,
      reconcileDays: config.reconcileDays,
      reconcileMaxRequests: config.reconcileMaxRequests,
    },
    api: { ...apiOptionsFor(config, logger, apiObserver), notices: new ServiceNotices({ writer, logger, clock, observer: apiObserver }) },
  };
}
