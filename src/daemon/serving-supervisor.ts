// The serving thread (lookups, feeds, probes' forwarding, the DNS primary) kept running by the
// main thread: if it dies anyway (a bug its guards did not catch, its heap run out), it is started
// again after a backoff, on the same ports, with the export index's state and the allowlist it
// had; meanwhile /readyz names the cause (answered by the main thread itself: probes-while-down.ts)
// and the sync, the writer and the schedule go on. It ended the daemon (exit 1) before.
import type { Logger } from 'pino';
import type { Allowlist } from '../allowlist/allowlist-entries.js';
import { errorMessage } from '../lib/errors.js';
import type { EnforcementCommand, EnforcementEvent } from '../serve/protocol.js';
import { type ServingThread, type ServingThreadOptions, startServingThread } from '../serve/serving-client.js';
import { answerWhileDown, type WhileDown } from './probes-while-down.js';

/** What /metrics shows of the serving thread; implemented by MirrorMetrics. */
export interface ServingThreadObserver {
  servingThreadRestarted(): void;
}

/** Seconds to wait before each start after a failure, the last repeated. */
export const RESTART_BACKOFF_SECONDS = [1, 2, 4, 8, 16, 32, 60] as const;
/** A thread that served this long without failing starts the backoff over. */
const STABLE_AFTER_MS = 10 * 60_000;

interface Down {
  readonly cause: string;
  readonly since: Date;
  readonly restartAt: Date;
}

export class ServingSupervisor implements ServingThread {
  /** The options each thread is started with: the callbacks here, the ports and the allowlist as they are now. */
  #options: ServingThreadOptions;
  readonly #onEvent: (event: EnforcementEvent) => void;
  readonly #logger: Logger;
  readonly #observer: ServingThreadObserver;
  #current: ServingThread | undefined;
  #startedAt = 0;
  /** Failures in a row (a thread that served STABLE_AFTER_MS resets it): the index into the backoff. */
  #failures = 0;
  #down: Down | undefined;
  #whileDown: Promise<WhileDown | undefined> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  /** The last index version told (replayed to a new thread), and whether the zone changed while none served. */
  #index: EnforcementCommand | undefined;
  #zoneChangedWhileDown = false;
  #dnsPort: number | undefined;

  private constructor(options: ServingThreadOptions, observer: ServingThreadObserver) {
    this.#options = { ...options, onEnforcementEvent: (event) => this.#event(event), onFailure: (error) => this.#failed(error) };
    this.#onEvent = options.onEnforcementEvent;
    this.#logger = options.logger;
    this.#observer = observer;
  }

  /** Resolves once the first thread serves; rejects with why it could not (a port in use, no database): that ends the daemon. */
  static async start(options: ServingThreadOptions, observer: ServingThreadObserver): Promise<ServingSupervisor> {
    const supervisor = new ServingSupervisor(options, observer);
    supervisor.#current = await startServingThread(supervisor.#options);
    supervisor.#startedAt = Date.now();
    return supervisor;
  }

  get port(): number {
    return this.#current?.port ?? this.#options.port ?? 0;
  }

  enforce(command: EnforcementCommand): void {
    this.#index = command;
    if (this.#current === undefined) this.#zoneChangedWhileDown ||= command.zoneChanged;
    this.#current?.enforce(command);
  }

  allowlist(list: Allowlist): void {
    this.#options = { ...this.#options, allowlist: list };
    this.#current?.allowlist(list);
  }

  /** Why /readyz is not ready because of the serving thread, while it is down. */
  readinessReason(): string | undefined {
    const down = this.#down;
    if (down === undefined) return undefined;
    const inSeconds = Math.max(0, Math.ceil((down.restartAt.getTime() - Date.now()) / 1000));
    return `the serving thread (lookups, feeds, the DNS primary) failed at ${down.since.toISOString()}: ${down.cause}; starting it again in ${inSeconds} s (failure ${this.#failures} in a row)`;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await (await this.#whileDown)?.close();
    await this.#current?.close();
  }

  #event(event: EnforcementEvent): void {
    if (event.type === 'dns-listening') this.#dnsPort = event.port;
    this.#onEvent(event);
  }

  #failed(error: Error): void {
    // The same ports as the first thread had (a port of 0 was chosen once), for its clients and secondaries.
    if (this.#current !== undefined) this.#options = { ...this.#options, port: this.#options.port === undefined ? undefined : this.#current.port, enforcement: this.#withDnsPort() };
    this.#current = undefined;
    if (this.#closed) return;
    if (Date.now() - this.#startedAt >= STABLE_AFTER_MS) this.#failures = 0;
    this.#failures += 1;
    const seconds = RESTART_BACKOFF_SECONDS[Math.min(this.#failures, RESTART_BACKOFF_SECONDS.length) - 1] ?? 60;
    const now = new Date();
    this.#down = { cause: errorMessage(error), since: now, restartAt: new Date(now.getTime() + seconds * 1000) };
    this.#logger.error({ err: error, restartInSeconds: seconds, failuresInARow: this.#failures }, 'the serving thread failed: starting it again after a pause; the sync goes on');
    this.#whileDown = this.#answerMeanwhile(this.#down.restartAt);
    this.#timer = setTimeout(() => void this.#restart(), seconds * 1000);
  }

  /** The main thread answers the probes on the HTTP port until the next thread starts (probes-while-down.ts). */
  async #answerMeanwhile(restartAt: Date): Promise<WhileDown | undefined> {
    const { port, host } = this.#options;
    if (port === undefined) return undefined;
    const retryAfterSeconds = (): number => Math.max(1, Math.ceil((restartAt.getTime() - Date.now()) / 1000));
    return answerWhileDown({ ...this.#options, host, port, retryAfterSeconds }).catch((error: unknown) => {
      this.#logger.warn({ err: error }, 'the probes cannot be answered while the serving thread is down');
      return undefined;
    });
  }

  async #restart(): Promise<void> {
    await (await this.#whileDown)?.close();
    this.#whileDown = undefined;
    if (this.#closed) return;
    try {
      this.#current = await startServingThread(this.#options);
    } catch (error) {
      this.#failed(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    this.#startedAt = Date.now();
    this.#down = undefined;
    this.#observer.servingThreadRestarted();
    if (this.#index !== undefined) this.#current.enforce({ ...this.#index, zoneChanged: this.#zoneChangedWhileDown });
    this.#zoneChangedWhileDown = false;
    this.#logger.info({ failuresInARow: this.#failures }, 'the serving thread is serving again');
    if (this.#closed) await this.#current.close();
  }

  #withDnsPort(): ServingThreadOptions['enforcement'] {
    const { enforcement } = this.#options;
    if (enforcement.dns === undefined || this.#dnsPort === undefined) return enforcement;
    return { ...enforcement, dns: { ...enforcement.dns, port: this.#dnsPort } };
  }
}
