// THREAT_MIRROR_ALLOWLIST in the daemon: the main thread alone follows the file (allowlist-watcher.ts)
// and hands each good version to everything that answers, so that all of them answer with the same
// one: the serving thread (lookups, feeds), the refresh job (export index, zone, files) and the
// mirror's allowlist table. A bad version is logged, counted, shown in /readyz, and changes nothing.
import type { Logger } from 'pino';
import type { Allowlist } from '../allowlist/allowlist-entries.js';
import type { ReadAllowlist } from '../allowlist/allowlist-file.js';
import { type AllowlistState, AllowlistWatcher } from '../allowlist/allowlist-watcher.js';
import type { Clock } from '../lib/days.js';

/** What /metrics shows of the allowlist; implemented by MirrorMetrics. */
export interface AllowlistObserver {
  allowlistState(state: AllowlistState): void;
  allowlistFailed(): void;
}

/** Who is handed each new version, in this order. */
export type AllowlistConsumer = (list: Allowlist) => Promise<void> | void;

export class DaemonAllowlist {
  readonly #watcher: AllowlistWatcher;
  readonly #consumers: AllowlistConsumer[] = [];
  readonly #logger: Logger;

  constructor(initial: ReadAllowlist, options: { readonly clock: Clock; readonly logger: Logger; readonly observer: AllowlistObserver }) {
    const { logger, observer } = options;
    this.#logger = logger;
    this.#watcher = new AllowlistWatcher(initial, options.clock, {
      applied: (list) => {
        logger.info({ file: list.file, entries: list.entries.length, version: list.version.slice(0, 16) }, 'allowlist changed: applying it to lookups, exports and the zone');
        observer.allowlistState(this.#watcher.state);
        void this.#handOn(list);
      },
      failed: (error, state) => {
        observer.allowlistFailed();
        observer.allowlistState(state);
        logger.error(
          { file: state.file, entriesInUse: state.list.entries.length, appliedAt: state.appliedAt.toISOString() },
          `THREAT_MIRROR_ALLOWLIST: ${error.message}; the previous list stays in use until the file is fixed`,
        );
      },
      recovered: (state) => {
        observer.allowlistState(state);
        logger.info({ file: state.file, entries: state.list.entries.length }, 'allowlist readable again, unchanged: the list in use stays');
      },
    });
    observer.allowlistState(this.#watcher.state);
    logger.info({ file: initial.list.file, entries: initial.list.entries.length }, 'allowlist in use');
  }

  get state(): AllowlistState {
    return this.#watcher.state;
  }

  /** Adds who is handed each new version (before start()). */
  onChange(consumer: AllowlistConsumer): void {
    this.#consumers.push(consumer);
  }

  start(): void {
    this.#watcher.start();
  }

  stop(): void {
    this.#watcher.stop();
  }

  /** Why /readyz is not ready because of the file, if it is not. */
  readinessReason(): string | undefined {
    const { problem, list, appliedAt } = this.#watcher.state;
    if (problem === undefined) return undefined;
    return `THREAT_MIRROR_ALLOWLIST: ${problem.message} (since ${problem.since.toISOString()}); the previous list of ${list.entries.length} entries, applied at ${appliedAt.toISOString()}, is still in use`;
  }

  async #handOn(list: Allowlist): Promise<void> {
    for (const consumer of this.#consumers) {
      try {
        await consumer(list);
      } catch (error) {
        this.#logger.error({ err: error }, 'allowlist not applied everywhere: a part failed to take it');
      }
    }
  }
}
