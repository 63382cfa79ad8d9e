// /healthz, /readyz, /startupz and /metrics for the orchestrator and Prometheus: what they answer.
// The server itself runs on a thread of its own (src/serve/serving-thread.ts) and asks the
// main thread for these answers, so they go on meaning "the main thread is responsive".
import type { Registry } from 'prom-client';
import { endpointsOf } from '../serve/endpoints.js';
import type { ProbeAnswer } from '../serve/protocol.js';
import type { Readiness } from './readiness.js';
import type { Startup } from './startup.js';

export interface HttpEndpointsOptions {
  readonly registry: Registry;
  readonly readiness: () => Readiness;
  /** /startupz: 200 once every organization has synced once, then for the life of the process. */
  readonly startup?: () => Startup;
}


/** The answer to every request but /v1/lookup (served by the server's thread itself). */
export async function answerProbe(options: HttpEndpointsOptions, method: string, path: string): Promise<ProbeAnswer> {
  const send = (status: number, contentType: string, body: string): ProbeAnswer => ({ status, contentType, body });
  if (method !== 'GET' && method !== 'HEAD') return send(405, 'application/json', '{"error":"method not allowed"}\n');
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
    return options.registry.metrics().then(
      (text) => send(200, options.registry.contentType, text),
      (error: unknown) => send(500, 'text/plain', `cannot collect metrics: ${String(error)}\n`),
    );
  }
  return send(404, 'application/json', `${JSON.stringify({ error: `not found; try ${endpointsOf('main')}, or the API: ${endpointsOf('serving')}` })}\n`);
}
