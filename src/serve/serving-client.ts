// The main thread's handle on the serving thread (serving-thread.ts; its messages: protocol.ts):
// starts it, answers the probes and fresh lookups it forwards, hands on what it reports, tells it
// of new versions of the index and the allowlist, stops it, and reports if it dies (the daemon's
// supervisor then starts another: daemon/serving-supervisor.ts).
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Allowlist } from '../allowlist/allowlist-entries.js';
import type { Clock } from '../lib/days.js';
import type { Secret } from '../lib/secret.js';
import { SERVING_LOG_MESSAGE } from './endpoints.js';
import { tokenDigest } from '../lib/bearer-token.js';
import { dispatch, type EnforcementCommand, type EnforcementData, type EnforcementEvent, type FromServingThread, type Handlers, type ProbeAnswer, type ServingThreadData, type ToServingThread } from './protocol.js';
import type { LookupBatch } from './lookup-stats.js';
import { type FreshAnswer, type FreshJudgement, unansweredFresh } from '../lookup/fresh-lookup.js';
import type { ServingFailure } from './guard.js';

/**
 * A fresh lookup's questions, one answer's values, answered by the main thread (it holds the keys:
 * daemon/fresh-http.ts): the organizations asked about, each as the serving thread judged it for the
 * answer's verdict. An answer for each value, in order. `signal` aborts when the thread that asked
 * is gone: no answer would reach it, so no more requests are sent for it.
 */
export type FreshAsker = (values: readonly string[], judged: readonly FreshJudgement[], signal: AbortSignal) => Promise<readonly FreshAnswer[]>;

/** A probe's answer (/healthz, /readyz, /startupz, /metrics), by the main thread: daemon/http-endpoints.ts. */
export type AnswerProbe = (method: string, path: string) => Promise<ProbeAnswer>;

export interface ServingThreadOptions {
  /** The probes' answers: the thread forwards every path but /v1/* here. */
  readonly answerProbe: AnswerProbe;
  readonly host: string;
  /** undefined: no HTTP server; the thread serves DNS only. */
  readonly port: number | undefined;
  readonly dbPath: string;
  /** The organizations the daemon mirrors, and its clock: what /v1/lookup's verdicts are judged by. */
  readonly organizations: readonly string[];
  readonly clock: Clock;
  readonly enforcement: EnforcementData;
  /** THREAT_MIRROR_ALLOWLIST as read at start. */
  readonly allowlist: Allowlist | undefined;
  readonly onEnforcementEvent: (event: EnforcementEvent) => void;
  /** THREAT_MIRROR_HTTP_TOKEN: /v1/* then requires it as a bearer token. */
  readonly token?: Secret | undefined;
  readonly logger: Logger;
  /** /v1/lookup?fresh=1: a value the mirror does not block, asked of the service here (fresh-http.ts). */
  readonly askFresh?: FreshAsker | undefined;
  /** The /v1/* requests the thread answered, about once a second. */
  readonly onLookups?: ((batch: LookupBatch) => void) | undefined;
  /** A request or DNS message whose handler failed, answered by the thread's guard (serve/guard.ts). */
  readonly onFailedRequest: (failure: ServingFailure) => void;
  /** Called once if the thread dies or fails after it started serving (not on close()), after it has exited. */
  readonly onFailure: (error: Error) => void;
}

export interface ServingThread {
  readonly port: number;
  /** Tells the thread's enforcement side (DNS, feeds) of a new version of the export index. */
  enforce(command: EnforcementCommand): void;
  /** A new version of THREAT_MIRROR_ALLOWLIST: the thread's lookups and feeds use it from now on. */
  allowlist(list: Allowlist): void;
  /** Closes the server and its connections and the thread's database connection, then ends the thread. */
  close(): Promise<void>;
}

/**
 * The thread's heap: a request of 1,000 values (4 MiB at most) and its answer, besides the Public
 * Suffix List; a cap keeps a runaway request from growing the process without bound.
 */
export const THREAD_HEAP_MB = 32;
/** How long close() lets the thread close its server and connection before ending it anyway. */
const CLOSE_TIMEOUT_MS = 1_000;

/** Resolves once the thread serves; rejects with why it could not (a port in use, no database). */
export async function startServingThread(options: ServingThreadOptions): Promise<ServingThread> {
  const client = new ServingClient(options);
  await client.started;
  return client;
}

class ServingClient implements ServingThread {
  readonly started: Promise<void>;
  readonly #options: ServingThreadOptions;
  readonly #worker: Worker;
  #state: 'starting' | 'serving' | 'failing' | 'closing' | 'gone' = 'starting';
  #port = 0;
  #started = { resolve: (): void => undefined, reject: (_error: Error): void => undefined };
  /** Called once the thread has said it closed. */
  #closed: (() => void) | undefined;
  /** Why the thread failed, told once it has exited (its ports are free again by then). */
  #failure: Error | undefined;
  /** Aborted when the thread exits: the fresh lookups it asked stop sending requests. */
  readonly #asking = new AbortController();

  constructor(options: ServingThreadOptions) {
    this.#options = options;
    this.started = new Promise((resolve, reject) => (this.#started = { resolve, reject }));
    this.#worker = new Worker(new URL('./serving-thread.js', import.meta.url), {
      workerData: {
        host: options.host,
        port: options.port,
        dbPath: options.dbPath,
        // The thread's clock is this machine's plus the daemon's offset (THREAT_MIRROR_NOW): a Clock does not cross threads.
        mirrored: { organizations: options.organizations, clockOffsetMs: options.clock().getTime() - Date.now() },
        enforcement: options.enforcement,
        tokenDigest: options.token === undefined ? undefined : tokenDigest(options.token).toString('hex'),
        allowlist: options.allowlist,
      } satisfies ServingThreadData,
      resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB, maxYoungGenerationSizeMb: 2 },
    });
    const handlers = this.#handlers();
    this.#worker.on('message', (message: FromServingThread) => dispatch(handlers, message));
    this.#worker.on('error', (error) => this.#fail(new Error(`the serving thread failed: ${error.message}`, { cause: error })));
    this.#worker.on('exit', (code) => this.#exited(code));
  }

  get port(): number {
    return this.#port;
  }

  enforce(command: EnforcementCommand): void {
    this.#post({ kind: 'enforcement', command });
  }

  allowlist(list: Allowlist): void {
    this.#post({ kind: 'allowlist', list });
  }

  async close(): Promise<void> {
    if (this.#state !== 'serving') return;
    this.#state = 'closing';
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, CLOSE_TIMEOUT_MS);
      this.#closed = () => {
        clearTimeout(timer);
        resolve();
      };
      this.#post({ kind: 'close' });
    });
    await this.#worker.terminate();
  }

  /** What the main thread does with each message of the thread. */
  #handlers(): Handlers<FromServingThread> {
    const options = this.#options;
    return {
      listening: (message) => this.#serving(message.port),
      probe: (message) => this.#answer(message.id, options.answerProbe(message.method, message.path).catch((error: unknown): ProbeAnswer => ({ status: 500, contentType: 'text/plain', body: `cannot answer ${message.path}: ${String(error)}\n` })), 'probe-answer'),
      fresh: (message) => {
        const failed = (error: unknown): FreshAnswer[] => message.values.map(() => unansweredFresh(String(error)));
        this.#answer(message.id, (options.askFresh?.(message.values, message.judged, this.#asking.signal) ?? Promise.reject(new Error('fresh lookups are not set up'))).catch(failed), 'fresh-answer');
      },
      lookups: (message) => options.onLookups?.(message),
      failure: (message) => options.onFailedRequest(message.failure),
      failed: (message) => this.#fail(new Error(`the serving thread on ${options.host}:${options.port} failed: ${message.message}`)),
      closed: () => this.#closed?.(),
      enforcement: (message) => options.onEnforcementEvent(message.event),
    };
  }

  /** Sends the thread its answer once the main thread has it, if the thread still serves. */
  #answer<K extends 'probe-answer' | 'fresh-answer'>(id: number, answer: Promise<Extract<ToServingThread, { kind: K }>['answer']>, kind: K): void {
    void answer.then((result) => {
      if (this.#state === 'serving') this.#post({ kind, id, answer: result } as Extract<ToServingThread, { kind: K }>);
    });
  }

  #serving(port: number): void {
    const options = this.#options;
    this.#state = 'serving';
    this.#port = port;
    if (options.port !== undefined) options.logger.info({ host: options.host, port, lookupToken: options.token !== undefined }, SERVING_LOG_MESSAGE);
    this.#started.resolve();
  }

  /** A failure ends the thread; what follows waits for its exit. */
  #fail(error: Error): void {
    this.#failure ??= error;
    if (this.#state === 'serving') this.#state = 'failing';
    void this.#worker.terminate();
  }

  #exited(code: number): void {
    const was = this.#state;
    this.#state = 'gone';
    this.#asking.abort(new Error('the serving thread that asked is gone'));
    const error = this.#failure ?? new Error(`the serving thread exited (code ${code})`);
    if (was === 'starting') this.#started.reject(error);
    else if (was === 'serving' || was === 'failing') this.#options.onFailure(error);
    this.#closed?.();
  }

  #post(message: ToServingThread): void {
    this.#worker.postMessage(message);
  }
}
