// Which handler of the serving thread answers an HTTP request: /v1/* here, behind the bearer token
// when one is set; every other path (the probes) asked of the main thread. Every route runs
// inside the guard (guard.ts), and so does the routing itself.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bearerMatches } from '../lib/bearer-token.js';
import { API_PREFIX, endpointsOf } from './endpoints.js';
import { sendAnswer, type ProbeForwarder } from './forwarders.js';
import { guardHttp, type HttpHandler, type ReportFailure } from './guard.js';
import type { LookupStats } from './lookup-stats.js';

export interface Routes {
  /** /v1/* by path: exact, or a prefix ending in /. */
  readonly api: Record<string, HttpHandler>;
  /** sha256 of THREAT_MIRROR_HTTP_TOKEN, which /v1/* then requires. */
  readonly tokenDigest: Buffer | undefined;
  readonly lookupStats: LookupStats;
  readonly probes: ProbeForwarder;
  readonly report: ReportFailure;
}

/** The server's one handler: /v1/* answered here (counted for /metrics, feeds aside: their duration is the client's reading speed), the rest forwarded. */
export function routeRequests(routes: Routes): HttpHandler {
  const api = Object.fromEntries(Object.entries(routes.api).map(([path, handler]) => [path, guardHttp(path, handler, routes.report)]));
  return guardHttp(
    'routing',
    (request, response) => {
      const path = (request.url ?? '/').split('?')[0] ?? '/';
      if (!path.startsWith(API_PREFIX)) return routes.probes.forward(request, response, path);
      const started = performance.now();
      if (!path.startsWith('/v1/exports/')) response.once('finish', () => routes.lookupStats.answered(response.statusCode, (performance.now() - started) / 1000));
      serveApi(api, routes.tokenDigest, path, request, response);
    },
    routes.report,
  );
}

/** /v1/*: the bearer token first (when one is set), then the handler of the path. */
function serveApi(api: Record<string, HttpHandler>, tokenDigest: Buffer | undefined, path: string, request: IncomingMessage, response: ServerResponse): void {
  if (tokenDigest !== undefined && !bearerMatches(request.headers.authorization, tokenDigest)) {
    // A body the request may carry is left to the server, which reads and drops it after the answer.
    response.writeHead(401, { 'content-type': 'application/json', 'cache-control': 'no-store', 'www-authenticate': 'Bearer realm="threat-mirror"' });
    response.end('{"error":"/v1/* needs the header Authorization: Bearer <THREAT_MIRROR_HTTP_TOKEN>"}\n');
    return;
  }
  const handler = api[path] ?? Object.entries(api).find(([prefix]) => prefix.endsWith('/') && path.startsWith(prefix))?.[1];
  if (handler !== undefined) return handler(request, response);
  sendAnswer(response, { status: 404, contentType: 'application/json', body: `${JSON.stringify({ error: `not found; the API is ${endpointsOf('serving')}` })}\n` });
}
