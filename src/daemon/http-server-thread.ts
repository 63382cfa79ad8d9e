// The HTTP server of THREAT_MIRROR_HTTP_PORT, on a thread of its own: it answers /v1/lookup from its
// own read-only connection, so a lookup never waits behind the sync's work on the main thread
// (fetching, parsing and validating pages held p99 at 62 ms at 500 lookups/s during a backfill).
// Every other path (/healthz, /readyz, /startupz, /metrics) is asked of the main thread: they must
// go on saying whether *it* answers, so a stuck main thread still shows in them.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { Database } from '../db/sqlite.js';
import type { ProbeAnswer } from './http-endpoints.js';
import { createLookupHandler } from './lookup-http.js';
import { ThreatLookup } from '../lookup/threat-lookup.js';
import { HEADERS_TIMEOUT_MS, IDLE_TIMEOUT_MS, MAX_CONNECTIONS, REQUEST_TIMEOUT_MS, TIMEOUT_CHECK_INTERVAL_MS } from './http-limits.js';
import { bearerMatches } from '../lib/http-token.js';
import { type LookupBatch, LookupStats } from './lookup-stats.js';

export interface HttpThreadData {
  readonly host: string;
  readonly port: number;
  readonly dbPath: string;
  /** sha256 (hex) of THREAT_MIRROR_HTTP_TOKEN, which /v1/* then requires; the token itself never reaches this thread. */
  readonly tokenDigest?: string | undefined;
}

/** From the server's thread to the main thread. */
export type FromHttpThread =
  | { readonly kind: 'listening'; readonly port: number }
  | { readonly kind: 'failed'; readonly message: string }
  | { readonly kind: 'probe'; readonly id: number; readonly method: string; readonly path: string }
  | { readonly kind: 'lookup-error'; readonly message: string; readonly stack?: string | undefined }
  | ({ readonly kind: 'lookups' } & LookupBatch)
  | { readonly kind: 'closed' };

/** From the main thread to the server's thread. */
export type ToHttpThread = { readonly kind: 'probe-answer'; readonly id: number; readonly answer: ProbeAnswer } | { readonly kind: 'close' };

const port = parentPort;
if (port) {
  const data = workerData as HttpThreadData;
  const post = (message: FromHttpThread): void => port.postMessage(message);
  let closing = false;
  let sqlite: Database | undefined;
  // Probes wait for the main thread's answer as long as it takes, as they did when the main
  // thread served them: the orchestrator's own probe timeout decides what "stuck" is.
  const waiting = new Map<number, ServerResponse>();
  let nextProbe = 1;
  const lookupStats = new LookupStats((batch) => post({ kind: 'lookups', ...batch }));
  const send = (response: ServerResponse, answer: ProbeAnswer): void => {
    response.writeHead(answer.status, { 'content-type': answer.contentType, 'cache-control': 'no-store' });
    response.end(answer.body);
  };
  const unauthorized = (response: ServerResponse): void => {
    // A body the request may carry is left to the server, which reads and drops it after the answer.
    response.writeHead(401, { 'content-type': 'application/json', 'cache-control': 'no-store', 'www-authenticate': 'Bearer realm="threat-mirror"' });
    response.end('{"error":"/v1/* needs the header Authorization: Bearer <THREAT_MIRROR_HTTP_TOKEN>"}\n');
  };
  try {
    // The same read-only connection the main thread used to open for lookups (openDatabaseReadOnly),
    // without drizzle: this thread's isolate loads only what lookups need.
    sqlite = new Database(data.dbPath, { readonly: true, fileMustExist: true });
    sqlite.pragma('busy_timeout = 5000');
    const lookup = createLookupHandler(new ThreatLookup(sqlite), (error) => {
      if (closing) return; // the connection closed under a request cut short by the shutdown
      post({ kind: 'lookup-error', message: error instanceof Error ? error.message : String(error), stack: error instanceof Error ? error.stack : undefined });
    });
    const tokenDigest = data.tokenDigest === undefined ? undefined : Buffer.from(data.tokenDigest, 'hex');
    const options = { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS };
    const server = createServer(options, (request: IncomingMessage, response: ServerResponse) => {
      const path = (request.url ?? '/').split('?')[0] ?? '/';
      if (path.startsWith('/v1/')) {
        const started = performance.now();
        response.once('finish', () => lookupStats.answered(response.statusCode, (performance.now() - started) / 1000));
        if (tokenDigest !== undefined && !bearerMatches(request.headers.authorization, tokenDigest)) return unauthorized(response);
        if (path === '/v1/lookup') return lookup(request, response);
        return send(response, { status: 404, contentType: 'application/json', body: '{"error":"not found; the API is /v1/lookup"}\n' });
      }
      const id = nextProbe++;
      waiting.set(id, response);
      response.once('close', () => waiting.delete(id));
      post({ kind: 'probe', id, method: request.method ?? 'GET', path });
    });
    port.on('message', (message: ToHttpThread) => {
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
      sqlite?.close();
      post({ kind: 'closed' });
      port.close();
    });
    server.maxConnections = MAX_CONNECTIONS;
    server.setTimeout(IDLE_TIMEOUT_MS);
    server.once('error', (error) => {
      sqlite?.close();
      post({ kind: 'failed', message: error.message });
      port.close();
    });
    server.listen(data.port, data.host, () => post({ kind: 'listening', port: (server.address() as AddressInfo).port }));
  } catch (error) {
    sqlite?.close();
    post({ kind: 'failed', message: error instanceof Error ? error.message : String(error) });
    port.close();
  }
}
