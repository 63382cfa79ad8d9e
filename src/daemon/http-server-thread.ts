// The HTTP server of THREAT_MIRROR_HTTP_PORT, on a thread of its own: it answers /v1/lookup from its
// own read-only connection, so a lookup never waits behind the sync's work on the main thread
// (fetching, parsing and validating pages held p99 at 62 ms at 500 lookups/s during a backfill).
// Every other path (/healthz, /readyz, /startupz, /metrics) is asked of the main thread: they must
// go on saying whether *it* answers, so a stuck main thread still shows in them.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import type { Allowlist } from '../allowlist/allowlist-entries.js';
import { AllowMatcher } from '../allowlist/allow-matcher.js';
import { Database } from '../db/sqlite.js';
import type { ProbeAnswer } from './http-endpoints.js';
import { createLookupHandler } from './lookup-http.js';
import { ThreatLookup } from '../commands/lookup.js';
import { type EnforcementCommand, type EnforcementData, type EnforcementEvent, type EnforcementSide, startEnforcementSide } from './enforcement-side.js';
import { HEADERS_TIMEOUT_MS, IDLE_TIMEOUT_MS, InFlightBudget, MAX_CONNECTIONS, REQUEST_TIMEOUT_MS, TIMEOUT_CHECK_INTERVAL_MS } from './http-limits.js';
import { bearerMatches } from '../lib/http-token.js';
import { type LookupBatch, LookupStats } from './lookup-stats.js';

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

/** From the server's thread to the main thread. */
export type FromHttpThread =
  | { readonly kind: 'listening'; readonly port: number }
  | { readonly kind: 'failed'; readonly message: string }
  | { readonly kind: 'probe'; readonly id: number; readonly method: string; readonly path: string }
  | { readonly kind: 'lookup-error'; readonly message: string; readonly stack?: string | undefined }
  | ({ readonly kind: 'lookups' } & LookupBatch)
  | { readonly kind: 'closed' }
  | { readonly kind: 'enforcement'; readonly event: EnforcementEvent };

/** From the main thread to the server's thread. */
export type ToHttpThread =
  | { readonly kind: 'probe-answer'; readonly id: number; readonly answer: ProbeAnswer }
  | { readonly kind: 'close' }
  | { readonly kind: 'enforcement'; readonly command: EnforcementCommand }
  /** A new version of THREAT_MIRROR_ALLOWLIST: lookups and feeds answer with it from now on. */
  | { readonly kind: 'allowlist'; readonly list: Allowlist };

const port = parentPort;
if (port) void serve(port);

async function serve(port: NonNullable<typeof parentPort>): Promise<void> {
  const data = workerData as HttpThreadData;
  const post = (message: FromHttpThread): void => port.postMessage(message);
  let closing = false;
  let sqlite: Database | undefined;
  let enforcement: EnforcementSide | undefined;
  // Probes wait for the main thread's answer as long as it takes, as they did when the main
  // thread served them: the orchestrator's own probe timeout decides what "stuck" is.
  const waiting = new Map<number, ServerResponse>();
  let nextProbe = 1;
  const lookupStats = new LookupStats((batch) => post({ kind: 'lookups', ...batch }));
  // The allowlist as the main thread last sent it, which alone reads the file: every answer of
  // this thread uses one version, the one the index and the files are brought to.
  let allowlist = data.allowlist;
  let matcher = allowlist === undefined ? undefined : new AllowMatcher(allowlist.entries);
  try {
    // The same read-only connection the main thread used to open for lookups (openDatabaseReadOnly),
    // without drizzle: this thread's isolate loads only what lookups need.
    sqlite = new Database(data.dbPath, { readonly: true, fileMustExist: true });
    sqlite.pragma('busy_timeout = 5000');
    // One budget of requests in flight for lookups and feeds alike (http-limits.ts).
    const budget = new InFlightBudget();
    const lookup = createLookupHandler(
      new ThreatLookup(sqlite),
      (error) => {
        if (closing) return; // the connection closed under a request cut short by the shutdown
        post({ kind: 'lookup-error', message: error instanceof Error ? error.message : String(error), stack: error instanceof Error ? error.stack : undefined });
      },
      budget,
      () => matcher,
    );
    const tokenDigest = data.tokenDigest === undefined ? undefined : Buffer.from(data.tokenDigest, 'hex');
    enforcement = await startEnforcementSide(data.enforcement, (event) => post({ kind: 'enforcement', event }), budget, () => allowlist);
    const feeds = enforcement.feeds;
    const options = { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS };
    const api: Record<string, Handler> = { '/v1/lookup': lookup, '/v1/exports/': (request, response) => feeds.handle(request, response) };
    const server = createServer(options, (request: IncomingMessage, response: ServerResponse) => {
      const path = (request.url ?? '/').split('?')[0] ?? '/';
      if (path.startsWith('/v1/')) {
        // Lookups' count and duration for /metrics; a feed's duration is its client's reading speed.
        const started = performance.now();
        if (!path.startsWith('/v1/exports/')) response.once('finish', () => lookupStats.answered(response.statusCode, (performance.now() - started) / 1000));
        return serveApi(api, tokenDigest, path, request, response);
      }
      const id = nextProbe++;
      waiting.set(id, response);
      response.once('close', () => waiting.delete(id));
      post({ kind: 'probe', id, method: request.method ?? 'GET', path });
    });
    port.on('message', (message: ToHttpThread) => {
      if (message.kind === 'enforcement') return enforcement?.command(message.command);
      if (message.kind === 'allowlist') {
        allowlist = message.list;
        matcher = new AllowMatcher(message.list.entries);
        return;
      }
      if (message.kind === 'probe-answer') {
        const response = waiting.get(message.id);
        waiting.delete(message.id);
        if (response && !response.writableEnded) send(response, message.answer);
        return;
      }
      closing = true;
      lookupStats.stop();
      server.close();
      server.closeAllConnections();
      void enforcement?.close().finally(() => {
        sqlite?.close();
        post({ kind: 'closed' });
        port.close();
      });
    });
    server.maxConnections = MAX_CONNECTIONS;
    server.setTimeout(IDLE_TIMEOUT_MS);
    server.once('error', (error) => {
      sqlite?.close();
      post({ kind: 'failed', message: error.message });
      port.close();
    });
    if (data.port === undefined) post({ kind: 'listening', port: 0 });
    else server.listen(data.port, data.host, () => post({ kind: 'listening', port: (server.address() as AddressInfo).port }));
  } catch (error) {
    await enforcement?.close().catch(() => undefined);
    sqlite?.close();
    post({ kind: 'failed', message: error instanceof Error ? error.message : String(error) });
    port.close();
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
