// /healthz, /readyz and /metrics for the orchestrator and Prometheus.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { LookupHandler } from './lookup-http.js';
import type { Readiness } from './readiness.js';
import type { Startup } from './startup.js';

export interface HttpEndpointsOptions {
  readonly host: string;
  readonly port: number;
  readonly registry: Registry;
  readonly readiness: () => Readiness;
  /** /startupz: 200 once every organization has synced once, then for the life of the process. */
  readonly startup?: () => Startup;
  readonly logger: Logger;
  /** GET/POST /v1/lookup (src/daemon/lookup-http.ts); absent: not served. */
  readonly lookup?: LookupHandler | undefined;
}

export interface HttpEndpoints {
  readonly port: number;
  close(): Promise<void>;
}

export async function startHttpEndpoints(options: HttpEndpointsOptions): Promise<HttpEndpoints> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const send = (status: number, contentType: string, body: string): void => {
      response.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
      response.end(body);
    };
    if (path === '/v1/lookup' && options.lookup) return options.lookup(request, response);
    if (request.method !== 'GET' && request.method !== 'HEAD') return send(405, 'application/json', '{"error":"method not allowed"}\n');
    if (path === '/healthz') return send(200, 'application/json', '{"status":"ok"}\n');
    if (path === '/readyz') {
      const readiness = options.readiness();
      return send(readiness.ready ? 200 : 503, 'application/json', `${JSON.stringify(readiness)}\n`);
    }
    if (path === '/startupz' && options.startup) {
      const startup = options.startup();
      return send(startup.started ? 200 : 503, 'application/json', `${JSON.stringify(startup)}\n`);
    }
    if (path === '/metrics') {
      options.registry.metrics().then(
        (text) => send(200, options.registry.contentType, text),
        (error: unknown) => send(500, 'text/plain', `cannot collect metrics: ${String(error)}\n`),
      );
      return;
    }
    send(404, 'application/json', '{"error":"not found; try /healthz, /readyz or /metrics"}\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  options.logger.info({ host: options.host, port }, 'serving /healthz, /readyz and /metrics');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
