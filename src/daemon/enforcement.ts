// The main thread's part of enforcement: after each run it has the export index (kept when the DNS
// primary or a host-format export needs it) and the export files brought up to date by a job on a
// thread of its own (export/jobs/), then tells the serving thread. A new version of
// THREAT_MIRROR_ALLOWLIST is applied the same way at once, without waiting for a run (a run may be
// going on: the job reads the mirror as committed, page by page). One job at a time; the main
// thread itself only starts the job and reads its result.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Allowlist } from '../allowlist/allowlist-entries.js';
import type { Config } from '../config.js';
import { exportIndexPathOf, exportsFolderOf, feedsFolderOf, sqliteFilesOf } from '../db/database-files.js';
import type { ExportObserver, RefresherState } from '../export/jobs/export-refresher.js';
import { isHostFormat } from '../config/export-formats.js';
import { type ZoneTimers, zoneTimersFor } from '../lib/rpz-zone.js';
import type { Clock } from '../lib/days.js';
import { errorMessage } from '../lib/errors.js';
import { schedulePeriodSeconds } from '../lib/schedule.js';
import type { EnforcementData, EnforcementEvent } from '../serve/protocol.js';
import type { ServingThread } from '../serve/serving-client.js';
import { runExportJob } from '../export/jobs/export-job-client.js';
import type { JobEvent } from '../export/jobs/protocol.js';

/**
 * What enforcement reports for /metrics; implemented by MirrorMetrics. An observer, as sync/ has:
 * this module knows nothing of the metrics (it imported them, which imported the allowlist's
 * observer, which imported this: a cycle).
 */
export interface EnforcementObserver extends ExportObserver {
  /** The zone's serial and names (hosts) after an update of the export index. */
  zoneSerial(serial: number, hosts: number): void;
  /** What the DNS primary on the serving thread reports. */
  dnsEvent(event: EnforcementEvent): void;
}

export class Enforcement {
  readonly #config: Config;
  readonly #logger: Logger;
  readonly #observer: EnforcementObserver;
  readonly #clock: Clock;
  readonly #timers: ZoneTimers;
  readonly #folder: string;
  /** Whether the export index was built since the daemon started: refreshes then read the change feed only. */
  #indexBuilt = false;
  /** What the last refresh knew of the export files. */
  #refresher: RefresherState | undefined;
  /** THREAT_MIRROR_ALLOWLIST as last read well: every refresh applies it. */
  #allowlist: Allowlist | undefined;
  /** The last refresh asked for: the next waits for it. */
  #tail: Promise<void> = Promise.resolve();
  /** A refresh asked for that has not started: a later request joins it (it reads the state when it starts). */
  #waiting: Promise<void> | undefined;

  constructor(options: { config: Config; logger: Logger; observer: EnforcementObserver; clock: Clock }) {
    this.#config = options.config;
    this.#logger = options.logger;
    this.#observer = options.observer;
    this.#clock = options.clock;
    this.#timers = zoneTimersFor(schedulePeriodSeconds(options.config.schedule));
    // Scratch files beside the mirror (its folder is writable; /tmp may not be): rebuilt at every start.
    this.#folder = exportsFolderOf(options.config.dbPath);
    this.#allowlist = options.config.allowlist?.list;
  }

  /** Whether an index is kept: the zone needs it, and host-format files are written from it. */
  get keepsIndex(): boolean {
    return this.#config.dns !== undefined || this.#config.exports.some((target) => isHostFormat(target.format));
  }

  /** The export index's file, when one is kept. */
  get #indexPath(): string | undefined {
    return this.keepsIndex ? exportIndexPathOf(this.#config.dbPath) : undefined;
  }

  /** What the serving thread needs to serve the zone and the feeds. */
  threadData(): EnforcementData {
    const period = schedulePeriodSeconds(this.#config.schedule);
    const { dns } = this.#config;
    return {
      dbPath: this.#config.dbPath,
      indexPath: this.#indexPath,
      feedsFolder: feedsFolderOf(this.#config.dbPath),
      timers: this.#timers,
      feedMaxAgeSeconds: Math.min(300, Math.max(10, Math.floor(period / 2))),
      dns: dns === undefined ? undefined : { ...dns, tsig: dns.tsig === undefined ? undefined : { name: dns.tsig.name, secret: dns.tsig.secret.reveal() } },
    };
  }

  /** A new version of THREAT_MIRROR_ALLOWLIST: the index, the zone and the files follow it at once. Never throws. */
  allowlistChanged(list: Allowlist, server: ServingThread | undefined, signal: AbortSignal): Promise<void> {
    this.#allowlist = list;
    return this.refresh(server, { signal });
  }

  /**
   * After each run (and once at start, and after the allowlist changed): the export index and the
   * files, on a thread of their own (export/jobs/), then the serving thread is told (NOTIFY,
   * feeds). One at a time: a refresh asked for while one runs waits for it, and requests made
   * meanwhile are one. Never throws.
   */
  refresh(server: ServingThread | undefined, options: { atStart?: boolean; signal?: AbortSignal } = {}): Promise<void> {
    if (this.#waiting !== undefined) return this.#waiting;
    const next = this.#tail.then(() => {
      this.#waiting = undefined;
      return this.#refreshNow(server, options);
    });
    this.#waiting = next;
    this.#tail = next;
    return next;
  }

  async #refreshNow(server: ServingThread | undefined, { atStart = false, signal }: { atStart?: boolean; signal?: AbortSignal }): Promise<void> {
    if (!this.keepsIndex && this.#config.exports.length === 0) return;
    if (signal?.aborted) return;
    try {
      const result = await runExportJob(
        {
          kind: 'refresh',
          dbPath: this.#config.dbPath,
          indexPath: this.#indexPath,
          // Built anew until a build succeeded; from the change feed after that.
          rebuild: !this.#indexBuilt,
          atStart,
          targets: this.#config.exports,
          timers: this.#timers,
          refresher: this.#refresher,
          allowlist: this.#allowlist,
          nowMs: this.#clock().getTime(),
        },
        (event) => this.#jobEvent(event),
        signal,
      );
      this.#refresher = result.refresher;
      if (result.index === undefined) return;
      this.#indexBuilt = true;
      const { state, hosts } = result.index;
      this.#observer.zoneSerial(state.serial, hosts);
      const zoneChanged = result.change?.zoneChanged ?? false;
      if (zoneChanged) this.#logger.info({ serial: state.serial, hosts, threatsRead: result.change?.threatsRead }, 'zone changed');
      server?.enforce({ type: 'index-updated', serial: state.serial, zoneChanged });
    } catch (error) {
      if (signal?.aborted) return;
      this.#logger.error({ err: error }, `export index not brought up to date: ${errorMessage(error)}; the zone and files stay as they were until the next run`);
    }
  }

  /** Logs and counts what the serving thread reports. */
  event(event: EnforcementEvent): void {
    switch (event.type) {
      case 'dns-listening':
        this.#logger.info({ host: this.#config.dns?.host, port: event.port, zone: this.#config.dns?.zone }, 'serving the response policy zone over DNS');
        return;
      case 'error':
        this.#logger.error(event.message);
        return;
      case 'dns-notified':
        if (event.outcome === 'unanswered') this.#logger.warn({ target: event.target }, 'NOTIFY unanswered after every retransmission');
        break;
      case 'dns-transferred':
        this.#logger.info({ kind: event.kind, records: event.records, ms: Math.round(event.ms) }, 'zone transferred');
        break;
    }
    this.#observer.dnsEvent(event);
  }

  /**
   * After the refresh in flight has ended (stopped by the daemon's signal, its thread gone with its
   * connection to the mirror): the writer's last close, which follows, then finds no other
   * connection, and the scratch folder is no longer in use. The index alone stays: its zone's serial
   * is what the secondaries hold, and the next start keeps it when the names are the same (a restart
   * then costs them no transfer; ExportIndex.create).
   */
  async close(): Promise<void> {
    await this.#tail;
    const kept = new Set(this.#indexPath === undefined ? [] : sqliteFilesOf(this.#indexPath));
    for (const entry of existsSync(this.#folder) ? readdirSync(this.#folder) : []) {
      const path = join(this.#folder, entry);
      if (!kept.has(path)) rmSync(path, { recursive: true, force: true });
    }
    if (kept.size === 0) rmSync(this.#folder, { recursive: true, force: true });
  }

  /** A log line or metric of the export thread, logged and counted here (one log stream, one registry). */
  #jobEvent(event: JobEvent): void {
    if (event.kind === 'log') this.#logger[event.level](event.fields, event.msg);
    else if (event.kind === 'export-checked') this.#observer.exportChecked(event.format, event.path, event.entries, event.lastWriteMs);
    else this.#observer.exportFailed(event.format, event.path);
  }
}
