// The main thread's part of enforcement: the export index (kept when the DNS primary or a
// host-format export needs it), the export files, and telling the serving thread after each run.
// Both the index and the files are brought up to date between runs, never during one.
import { rmSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { ExportIndex } from '../export/export-index.js';
import { ExportRefresher } from '../export/daemon-exports.js';
import { isHostFormat } from '../export/export-formats.js';
import { type ZoneTimers, zoneTimersFor } from '../export/rpz.js';
import { errorMessage } from '../lib/errors.js';
import { schedulePeriodSeconds } from '../lib/schedule.js';
import type { EnforcementData, EnforcementEvent } from './enforcement-side.js';
import type { HttpServer } from './http-server-worker.js';
import type { MirrorMetrics } from './metrics.js';

export class Enforcement {
  readonly #config: Config;
  readonly #logger: Logger;
  readonly #metrics: MirrorMetrics;
  readonly #timers: ZoneTimers;
  readonly #folder: string;
  #index: ExportIndex | undefined;
  #exports: ExportRefresher | undefined;

  constructor(options: { config: Config; logger: Logger; metrics: MirrorMetrics }) {
    this.#config = options.config;
    this.#logger = options.logger;
    this.#metrics = options.metrics;
    this.#timers = zoneTimersFor(schedulePeriodSeconds(options.config.schedule));
    // Scratch files beside the mirror (its folder is writable; /tmp may not be): rebuilt at every start.
    this.#folder = `${options.config.dbPath}.exports`;
  }

  /** Whether an index is kept: the zone needs it, and host-format files are written from it. */
  get keepsIndex(): boolean {
    return this.#config.dns !== undefined || this.#config.exports.some((target) => isHostFormat(target.format));
  }

  /** What the serving thread needs to serve the zone and the feeds. */
  threadData(): EnforcementData {
    const period = schedulePeriodSeconds(this.#config.schedule);
    return {
      dbPath: this.#config.dbPath,
      indexPath: this.keepsIndex ? `${this.#folder}/index.db` : undefined,
      feedsFolder: `${this.#folder}/feeds`,
      timers: this.#timers,
      feedMaxAgeSeconds: Math.min(300, Math.max(10, Math.floor(period / 2))),
      dns: this.#config.dns,
    };
  }

  /** After each run (and once at start): index, files, then the serving thread (NOTIFY, feeds). Never throws. */
  async refresh(server: HttpServer | undefined, { atStart = false } = {}): Promise<void> {
    try {
      const change = await this.#refreshIndex();
      // At start the files are left as they are (rewritten after runs only); the zone's serial follows the rpz file's.
      if (atStart) await this.#exportsRefresher()?.adoptZoneSerial();
      else await this.#exportsRefresher()?.refresh();
      const index = this.#index;
      if (index === undefined) return;
      const state = index.view.state();
      this.#metrics.zoneSerial(state.serial, index.view.size);
      if (change?.zoneChanged) this.#logger.info({ serial: state.serial, threatsRead: change.threatsRead }, 'zone changed');
      server?.enforce({ type: 'index-updated', serial: state.serial, zoneChanged: change?.zoneChanged ?? false });
    } catch (error) {
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
    this.#metrics.dnsEvent(event);
  }

  close(): void {
    this.#index?.close();
    this.#index = undefined;
    rmSync(this.#folder, { recursive: true, force: true });
  }

  async #refreshIndex() {
    if (!this.keepsIndex) return undefined;
    if (this.#index === undefined) {
      const started = performance.now();
      this.#index = await ExportIndex.create(this.#config.dbPath, this.#folder);
      this.#logger.info({ hosts: this.#index.view.size, ms: Math.round(performance.now() - started) }, 'export index built');
      return { zoneChanged: true, hostsChanged: true, serial: this.#index.view.state().serial, threatsRead: 0 };
    }
    return this.#index.refresh();
  }

  #exportsRefresher(): ExportRefresher | undefined {
    if (this.#config.exports.length === 0) return undefined;
    this.#exports ??= new ExportRefresher({ dbPath: this.#config.dbPath, targets: this.#config.exports, logger: this.#logger, observer: this.#metrics, index: this.#index, timers: this.#timers });
    return this.#exports;
  }
}
