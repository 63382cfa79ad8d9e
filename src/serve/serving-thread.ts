// The HTTP server of THREAT_MIRROR_HTTP_PORT, on a thread of its own: it answers /v1/lookup from its
// own read-only connection, so a lookup never waits behind the sync's work on the main thread
// (fetching, parsing and validating pages held p99 at 62 ms at 500 lookups/s during a backfill).
// Every other path (/healthz, /readyz, /startupz, /metrics) is asked of the main thread: they must
// go on saying whether *it* answers, so a stuck main thread still shows in them.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import type { Allowlist } from '../allowlist/allowlist-entries.js';
import { AllowMatcher } from '../allowlist/allow-matcher.js';
import { openDatabaseReadOnly, type ReadOnlyConnection } from '../db/open-database.js';
import { createLookupHandler } from './lookup-http.js';
import { ThreatLookup } from '../lookup/threat-lookup.js';
import type { FreshAnswer } from '../lookup/fresh-lookup.js';
import { type EnforcementCommand, type EnforcementData, type EnforcementEvent, type EnforcementSide, startEnforcementSide } from './enforcement-side.js';
import { capConnectionsPerAddress, HEADERS_TIMEOUT_MS, IDLE_TIMEOUT_MS, InFlightBudget, MAX_CONNECTIONS, REQUEST_TIMEOUT_MS, TIMEOUT_CHECK_INTERVAL_MS } from './http-limits.js';
import { bearerMatches } from '../lib/http-token.js';
import { type LookupBatch, LookupStats } from './lookup-stats.js';
import { describeError, guardHttp, type ReportFailure, type ServingFailure } from './guard.js';

export interface HttpThreadData {
  readonly host: string;
  /** undefined: no HTTP server, the thread serves DNS only (enforcement). */
  readonly port: number | undefined;
  readonly dbPath: string;
  /** Enforcement: feeds, and the DNS primary when configured (enforcement-side.ts). */
  readonly enforcement: EnforcementData;
  /** sha256 (hex) of THREAT_MIRROR_HTTP_TOKEN, which /v1/* then requires; the token itself never reaches this thread. */
  readonly tokenDigest?: string | undefined;
  /** THREAT_MIRROR_ALLOWLIST as the main thread read it at start; later versions come as messages. */
  readonly allowlist: Allowlist | undefined;
}

/** One HTTP answer of the main thread (a probe's), plain data: it crosses to the server's thread. */
export interface ProbeAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

/** From the server's thread to the main thread. */
export type FromHttpThread =
  | { readonly kind: 'listening'; readonly port: number }
  | { readonly kind: 'failed'; readonly message: string }
  | { readonly kind: 'probe'; readonly id: number; readonly method: string; readonly path: string }
  | { readonly kind: 'fresh'; readonly id: number; readonly value: string }
  /** A handler failed: answered 400/500 (DNS: FORMERR/SERVFAIL) by the guard, for the main thread to log and count. */
  | { readonly kind: 'failure'; readonly failure: ServingFailure }
  | ({ readonly kind: 'lookups' } & LookupBatch)
  | { readonly kind: 'closed' }
  | { readonly kind: 'enforcement'; readonly event: EnforcementEvent };

/** From the main thread to the server's thread. */
export type ToHttpThread =
  | { readonly kind: 'probe-answer'; readonly id: number; readonly answer: ProbeAnswer }
  | { readonly kind: 'fresh-answer'; readonly id: number; readonly answer: FreshAnswer }
  | { readonly kind: 'close' }
  | { readonly kind: 'enforcement'; readonly command: EnforcementCommand }
  /** A new version of THREAT_MIRROR_ALLOWLIST: lookups and feeds answer with it from now on. */
  | { readonly kind: 'allowlist'; readonly list: Allowlist };

/**
 * THREAT_MIRROR_ALLOWLIST as the main thread last sent it (it alone reads the file): every answer
 * of this thread uses one version, the one the index and the files are brought to.
 */
class AllowlistInUse {
  list: Allowlist | undefined;
  matcher: AllowMatcher | undefined;

  constructor(list: Allowlist | undefined) {
    this.take(list);
  }

  take(list: Allowlist | undefined): void {
    this.list = list;
    this.matcher = list === undefined ? undefined : new AllowMatcher(list.entries);
  }
}

async function serve(port: NonNullable<typeof parentPort>): Promise<void> {
  const data = workerData as HttpThreadData;
  const post = (message: FromHttpThread): void => port.postMessage(message);
  let closing = false;
  let mirror: ReadOnlyConnection | undefined;
  let enforcement: EnforcementSide | undefined;
  const probes = new ProbeForwarder(post);
  const fresh = new FreshForwarder(post);
  const lookupStats = new LookupStats((batch) => post({ kind: 'lookups', ...batch }));
  const allowlist = new AllowlistInUse(data.allowlist);
  const report: ReportFailure = (failure) => {
    if (!closing) post({ kind: 'failure', failure }); // not a request cut short by the shutdown
  };
  try {
    // A read-only connection of its own, with the driver alone: this isolate loads only what lookups need.
    mirror = openDatabaseReadOnly(data.dbPath);
    // One budget of requests in flight for lookups and feeds alike (http-limits.ts).
    const budget = new InFlightBudget();
    const lookup = createLookupHandler(
      new ThreatLookup(mirror.sqlite),
      (error) => report({ listener: 'http', route: '/v1/lookup', answer: '500', ...describeError(error) }),
      budget,
      () => allowlist.matcher,
      (value) => fresh.ask(value),
    );
    enforcement = await startEnforcementSide(data.enforcement, (event) => post({ kind: 'enforcement', event }), { budget, allowlist: () => allowlist.list, report });
    const feeds = enforcement.feeds;
    // Each route inside the guard (guard.ts), and the routing itself: nothing a request makes throw ends the thread.
    const api: Record<string, Handler> = {
      '/v1/lookup': guardHttp('/v1/lookup', lookup, report),
      '/v1/exports/': guardHttp('/v1/exports/', (request, response) => feeds.handle(request, response), report),
    };
    const server = createServer(
      { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS },
      guardHttp('routing', route({ api, tokenDigest: data.tokenDigest === undefined ? undefined : Buffer.from(data.tokenDigest, 'hex'), lookupStats, probes }), report),
    );
    const opened = { mirror, enforcement };
    port.on('message', (message: ToHttpThread) => {
      if (message.kind === 'enforcement') return opened.enforcement.command(message.command);
      if (message.kind === 'probe-answer') return probes.answer(message.id, message.answer);
      if (message.kind === 'fresh-answer') return fresh.answer(message.id, message.answer);
      if (message.kind === 'allowlist') return allowlist.take(message.list);
      closing = true;
      lookupStats.stop();
      server.close();
      server.closeAllConnections();
      void opened.enforcement.close().finally(() => {
        opened.mirror.close();
        post({ kind: 'closed' });
        port.close();
      });
    });
    listen(server, data, () => {
      opened.mirror.close();
      port.close();
    }, post);
  } catch (error) {
    await enforcement?.close().catch(() => undefined);
    mirror?.close();
    post({ kind: 'failed', message: error instanceof Error ? error.message : String(error) });
    port.close();
  }
}

/** Serves on the configured port (none: DNS only), with its bounds; a failure to listen is told, and `release` lets go. */
function listen(server: Server, data: HttpThreadData, release: () => void, post: (message: FromHttpThread) => void): void {
  server.maxConnections = MAX_CONNECTIONS;
  capConnectionsPerAddress(server);
  server.setTimeout(IDLE_TIMEOUT_MS);
  server.once('error', (error) => {
    post({ kind: 'failed', message: error.message });
    release();
  });
  if (data.port === undefined) post({ kind: 'listening', port: 0 });
  else server.listen(data.port, data.host, () => post({ kind: 'listening', port: (server.address() as AddressInfo).port }));
}

/** /v1/* answered here (counted for /metrics, feeds aside: their duration is the client's reading speed); every other path asked of the main thread. */
function route({ api, tokenDigest, lookupStats, probes }: { api: Record<string, Handler>; tokenDigest: Buffer | undefined; lookupStats: LookupStats; probes: ProbeForwarder }): Handler {
  return (request, response) => {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    if (!path.startsWith('/v1/')) return probes.forward(request, response, path);
    const started = performance.now();
    if (!path.startsWith('/v1/exports/')) response.once('finish', () => lookupStats.answered(response.statusCode, (performance.now() - started) / 1000));
    serveApi(api, tokenDigest, path, request, response);
  };
}

/**
 * The probes (/healthz, /readyz, /startupz, /metrics), each asked of the main thread and answered
 * with what it says. They wait for that answer as long as it takes: the orchestrator's own probe
 * timeout decides what "stuck" is.
 */
class ProbeForwarder {
  readonly #post: (message: FromHttpThread) => void;
  readonly #waiting = new Map<number, ServerResponse>();
  #next = 1;

  constructor(post: (message: FromHttpThread) => void) {
    this.#post = post;
  }

  forward(request: IncomingMessage, response: ServerResponse, path: string): void {
    const id = this.#next++;
    this.#waiting.set(id, response);
    response.once('close', () => this.#waiting.delete(id));
    this.#post({ kind: 'probe', id, method: request.method ?? 'GET', path });
  }

  answer(id: number, answer: ProbeAnswer): void {
    const response = this.#waiting.get(id);
    this.#waiting.delete(id);
    if (response && !response.writableEnded) send(response, answer);
  }
}

/** A fresh lookup's question, asked of the main thread, which holds the keys (fresh-http.ts). */
class FreshForwarder {
  readonly #post: (message: FromHttpThread) => void;
  readonly #waiting = new Map<number, (answer: FreshAnswer) => void>();
  #next = 1;

  constructor(post: (message: FromHttpThread) => void) {
    this.#post = post;
  }

  ask(value: string): Promise<FreshAnswer> {
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#waiting.set(id, resolve);
      this.#post({ kind: 'fresh', id, value });
    });
  }

  answer(id: number, answer: FreshAnswer): void {
    this.#waiting.get(id)?.(answer);
    this.#waiting.delete(id);
  }
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** /v1/*: the bearer token first (when one is set), then the handler of the path (exact, or a prefix ending in /). */
function serveApi(api: Record<string, Handler>, tokenDigest: Buffer | undefined, path: string, request: IncomingMessage, response: ServerResponse): void {
  if (tokenDigest !== undefined && !bearerMatches(request.headers.authorization, tokenDigest)) {
    // A body the request may carry is left to the server, which reads and drops it after the answer.
    response.writeHead(401, { 'content-type': 'application/json', 'cache-control': 'no-store', 'www-authenticate': 'Bearer realm="threat-mirror"' });
    response.end('{"error":"/v1/* needs the header Authorization: Bearer <THREAT_MIRROR_HTTP_TOKEN>"}\n');
    return;
  }
  const handler = api[path] ?? Object.entries(api).find(([prefix]) => prefix.endsWith('/') && path.startsWith(prefix))?.[1];
  if (handler !== undefined) return handler(request, response);
  send(response, { status: 404, contentType: 'application/json', body: '{"error":"not found; the API is /v1/lookup and /v1/exports/FORMAT"}\n' });
}

function send(response: ServerResponse, answer: ProbeAnswer): void {
  response.writeHead(answer.status, { 'content-type': answer.contentType, 'cache-control': 'no-store' });
  response.end(answer.body);
}

// Last: the classes above are defined by the time the thread starts serving.
if (parentPort) void serve(parentPort);
