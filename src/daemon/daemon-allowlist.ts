// THREAT_MIRROR_ALLOWLIST in the daemon: the main thread alone follows the file (allowlist-watcher.ts)
// and hands each good version to everything that answers, so that all of them answer with the same
// one: the serving thread (lookups, feeds), the refresh job (export index, zone, files) and the
// mirror's allowlist table. A bad version is logged, counted, shown in /readyz, and changes nothing.
import type { Logger } from 'pino';
import type { Allowlist } from '../allowlist/allowlist-entries.js';
import type { ReadAllowlist } from '../allowlist/allowlist-file.js';
import { type AllowlistState, AllowlistWatcher } from '../allowlist/allowlist-watcher.js';
import type { WriterClient } from '../db/writer/writer-client.js';
import type { Clock } from '../lib/days.js';
import type { Enforcement } from './enforcement.js';
import type { ServingThread } from '../serve/serving-client.js';

/** What /metrics shows of the allowlist; implemented by MirrorMetrics. */
export interface AllowlistObserver {
  allowlistState(state: AllowlistState): void;
  allowlistFailed(): void;
}

/** Who is handed each new version, in this order. */
type AllowlistConsumer = (list: Allowlist) => Promise<void> | void;

/** Everything that answers with the list, besides the main thread. */
export interface AllowlistParts {
  /** The serving thread (lookups, feeds); undefined when neither port is set. */
  readonly server: ServingThread | undefined;
  /** The writer thread: the mirror's table allowlist. */
  readonly writer: WriterClient;
  /** The refresh job: the export index, the zone and the files. */
  readonly enforcement: Enforcement;
  readonly signal: AbortSignal;
}

export class DaemonAllowlist {
  readonly #watcher: AllowlistWatcher;
  readonly #consumers: AllowlistConsumer[] = [];
  readonly #logger: Logger;
  readonly #clock: Clock;

  constructor(initial: ReadAllowlist, options: { readonly clock: Clock; readonly logger: Logger; readonly observer: AllowlistObserver }) {
    const { logger, observer } = options;
    this.#logger = logger;
    this.#clock = options.clock;
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

  /**
   * Follows the file from now on (a change during the start's refresh is applied right after it).
   * Each new version goes to the serving thread at once, then to the mirror's table, then to the
   * index, the zone and the files.
   */
  follow({ server, writer, enforcement, signal }: AllowlistParts): void {
    this.#consumers.push(
      (list) => server?.allowlist(list),
      async () => {
        // Between runs the writer thread is ended (docs/performance.md, "The daemon at idle"): one
        // started for this write alone ends after it.
        const started = writer.suspended;
        await this.mirror(writer);
        if (started) await writer.suspend();
      },
      (list) => enforcement.allowlistChanged(list, server, signal),
    );
    this.#watcher.start();
  }

  /**
   * The mirror's table allowlist made to hold the list in use (SQL readers: enforced_threats), as
   * of when it came into use; the writer writes nothing when the table holds it already. Also
   * after each run: a version whose write failed is written then.
   */
  async mirror(writer: WriterClient): Promise<void> {
    const { list, appliedAt } = this.#watcher.state;
    const mirrored = { file: list.file, version: list.version, appliedAt: appliedAt.toISOString(), entries: list.entries };
    await writer.call('mirrorAllowlist', { list: mirrored, now: this.#clock().toISOString() });
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
