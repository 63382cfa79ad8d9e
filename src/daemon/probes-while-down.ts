// While the serving thread is down and waiting to be started again (serving-supervisor.ts), the
// main thread answers its HTTP port itself: /healthz 200 (the process is alive, and restarts the
// thread on its own: an orchestrator has no container to restart over it), /readyz 503 naming the
// cause, /startupz and /metrics as always, and /v1/* 503 with Retry-After until the thread is back.
// Plain and small: the same answers as the thread forwards (http-endpoints.ts), the same bounds.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AnswerProbe } from '../serve/serving-client.js';
import { API_PREFIX } from '../serve/endpoints.js';
import type { ProbeAnswer } from '../serve/protocol.js';
import { capConnectionsPerAddress, HEADERS_TIMEOUT_MS, IDLE_TIMEOUT_MS, MAX_CONNECTIONS, REQUEST_TIMEOUT_MS, TIMEOUT_CHECK_INTERVAL_MS } from '../serve/http-limits.js';

export interface WhileDown {
  /** Stops answering and frees the port for the next thread. */
  close(): Promise<void>;
}

export interface WhileDownOptions {
  readonly answerProbe: AnswerProbe;
  readonly host: string;
  readonly port: number;
  /** Seconds until the thread is started again: /v1/* asks clients to come back then. */
  readonly retryAfterSeconds: () => number;
}

export async function answerWhileDown(options: WhileDownOptions): Promise<WhileDown> {
  const server = createServer({ headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS }, (request, response) => {
    void answer(options, request).then(
      (answered) => send(response, answered, request.url?.startsWith(API_PREFIX) === true ? { 'retry-after': String(options.retryAfterSeconds()) } : {}),
      () => send(response, { status: 500, contentType: 'text/plain', body: 'cannot answer\n' }, {}),
    );
  });
  server.maxConnections = MAX_CONNECTIONS;
  capConnectionsPerAddress(server);
  server.setTimeout(IDLE_TIMEOUT_MS);
  server.listen(options.port, options.host);
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([error]) => Promise.reject(error as Error))]);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function answer(options: WhileDownOptions, request: IncomingMessage): Promise<ProbeAnswer> {
  const path = (request.url ?? '/').split('?')[0] ?? '/';
  if (path.startsWith(API_PREFIX)) {
    return { status: 503, contentType: 'application/json', body: `${JSON.stringify({ error: `the serving thread is starting again; retry in ${options.retryAfterSeconds()} s (see /readyz)` })}\n` };
  }
  return options.answerProbe(request.method ?? 'GET', path);
}

function send(response: ServerResponse, answered: ProbeAnswer, headers: Record<string, string>): void {
  response.writeHead(answered.status, { 'content-type': answered.contentType, 'cache-control': 'no-store', ...headers });
  response.end(answered.body);
}
