// The main thread's handle on the HTTP server's thread (http-server-thread.ts): starts it, answers
// the probes it forwards, logs its lookup errors, stops it, and reports if it dies.
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Allowlist } from '../allowlist/allowlist-entries.js';
import type { Secret } from '../lib/secret.js';
import { tokenDigest } from '../lib/http-token.js';
import type { FromHttpThread, HttpThreadData, ProbeAnswer, ToHttpThread } from './serving-thread.js';
import type { EnforcementCommand, EnforcementData, EnforcementEvent } from './enforcement-side.js';
import type { LookupBatch } from './lookup-stats.js';
import type { FreshAnswer } from '../lookup/fresh-lookup.js';
import type { ServingFailure } from './guard.js';

/** A fresh lookup's question, answered by the main thread (it holds the keys: daemon/fresh-http.ts). */
export type FreshAsker = (value: string) => Promise<FreshAnswer>;

/** A probe's answer (/healthz, /readyz, /startupz, /metrics), by the main thread: daemon/http-endpoints.ts. */
export type AnswerProbe = (method: string, path: string) => Promise<ProbeAnswer>;

export interface HttpServerOptions {
  /** The probes' answers: the thread forwards every path but /v1/* here. */
  readonly answerProbe: AnswerProbe;
  readonly host: string;
  /** undefined: no HTTP server; the thread serves DNS only. */
  readonly port: number | undefined;
  readonly dbPath: string;
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

export interface HttpServer {
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
const THREAD_HEAP_MB = 32;
/** How long close() lets the thread close its server and connection before ending it anyway. */
const CLOSE_TIMEOUT_MS = 1_000;

/** Resolves once the server listens; rejects with why it could not (a port in use, no database). */
export function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const { logger } = options;
  const worker = new Worker(new URL('./serving-thread.js', import.meta.url), {
    workerData: {
      host: options.host,
      port: options.port,
      dbPath: options.dbPath,
      enforcement: options.enforcement,
      tokenDigest: options.token === undefined ? undefined : tokenDigest(options.token).toString('hex'),
      allowlist: options.allowlist,
    } satisfies HttpThreadData,
    resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB, maxYoungGenerationSizeMb: 2 },
  });
  let state: 'starting' | 'serving' | 'failing' | 'closing' | 'gone' = 'starting';
  let closed: (() => void) | undefined;
  /** Why the thread failed, told once it has exited (its ports are free again by then). */
  let failure: Error | undefined;
  const post = (message: ToHttpThread): void => worker.postMessage(message);
  const answer = (id: number, method: string, path: string): void => {
    options
      .answerProbe(method, path)
      .catch((error: unknown): ProbeAnswer => ({ status: 500, contentType: 'text/plain', body: `cannot answer ${path}: ${String(error)}\n` }))
      .then((result) => {
        if (state === 'serving') post({ kind: 'probe-answer', id, answer: result });
      });
  };
  return new Promise<HttpServer>((resolve, reject) => {
    // A failure ends the thread; what follows waits for its exit.
    const fail = (error: Error): void => {
      failure ??= error;
      if (state === 'serving') state = 'failing';
      void worker.terminate();
    };
    const exited = (code: number): void => {
      const was = state;
      state = 'gone';
      const error = failure ?? new Error(`the serving thread exited (code ${code})`);
      if (was === 'starting') reject(error);
      else if (was === 'serving' || was === 'failing') options.onFailure(error);
      closed?.();
    };
    const serving = (port: number): void => {
      state = 'serving';
      if (options.port !== undefined) logger.info({ host: options.host, port, lookupToken: options.token !== undefined }, 'serving /healthz, /readyz and /metrics');
      resolve({ port, close, enforce: (command) => post({ kind: 'enforcement', command }), allowlist: (list) => post({ kind: 'allowlist', list }) });
    };
    const fresh = (id: number, value: string): void => {
      const asked = options.askFresh?.(value) ?? Promise.reject(new Error('fresh lookups are not set up'));
      asked
        .catch((error: unknown) => ({ matches: [], queries: [{ organization: '*', from: '', to: '', refreshed: false, requests: 0, error: String(error) }] }))
        .then((result) => {
          if (state === 'serving') post({ kind: 'fresh-answer', id, answer: result });
        });
    };
    worker.on('message', (message: FromHttpThread) => take(message, { options, serving, answer, fresh, fail, closed: () => closed?.() }));
    worker.on('error', (error) => fail(new Error(`the serving thread failed: ${error.message}`, { cause: error })));
    worker.on('exit', exited);
  });

  async function close(): Promise<void> {
    if (state !== 'serving') return;
    state = 'closing';
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, CLOSE_TIMEOUT_MS);
      closed = () => {
        clearTimeout(timer);
        resolve();
      };
      post({ kind: 'close' });
    });
    await worker.terminate();
  }
}

/** What the main thread does with each message of the server's thread. */
function take(
  message: FromHttpThread,
  on: {
    options: HttpServerOptions;
    serving: (port: number) => void;
    answer: (id: number, method: string, path: string) => void;
    fresh: (id: number, value: string) => void;
    fail: (error: Error) => void;
    closed: () => void;
  },
): void {
  const { options } = on;
  switch (message.kind) {
    case 'listening':
      return on.serving(message.port);
    case 'probe':
      return on.answer(message.id, message.method, message.path);
    case 'fresh':
      return on.fresh(message.id, message.value);
    case 'lookups':
      return options.onLookups?.(message);
    case 'failure':
      return options.onFailedRequest(message.failure);
    case 'failed':
      return on.fail(new Error(`the HTTP server on ${options.host}:${options.port} failed: ${message.message}`));
    case 'closed':
      return on.closed();
    case 'enforcement':
      return options.onEnforcementEvent(message.event);
  }
}
