// Every HTTP path the daemon answers on THREAT_MIRROR_HTTP_PORT, once: the routing, the 404 answers,
// the startup log and `--help` name them from here, and test/exposed-names.test.ts fails when a doc
// or a rule names a path that is not here, or a path here that no doc names.

export interface Endpoint {
  /** As the docs write it; a prefix route ends in `/` and is written with what follows (`/v1/exports/FORMAT`). */
  readonly path: string;
  /** The path matched: exactly, or as a prefix when it ends in `/`. */
  readonly route: string;
  /** Probes and /metrics are answered by the main thread (they say whether it answers); /v1/* by the serving thread. */
  readonly thread: 'main' | 'serving';
  readonly meaning: string;
}

export const ENDPOINTS: readonly Endpoint[] = [
  { path: '/healthz', route: '/healthz', thread: 'main', meaning: '200 while the process is alive' },
  { path: '/readyz', route: '/readyz', thread: 'main', meaning: '200 while every organization is synced and fresh and the file answers; 503 with the reasons' },
  { path: '/startupz', route: '/startupz', thread: 'main', meaning: '200 once every organization has synced once, then for the life of the process' },
  { path: '/metrics', route: '/metrics', thread: 'main', meaning: 'Prometheus metrics' },
  { path: '/v1/lookup', route: '/v1/lookup', thread: 'serving', meaning: 'is it blocked, with the verdict (GET ?value=V, POST {"values": [...]})' },
  { path: '/v1/exports/FORMAT', route: '/v1/exports/', thread: 'serving', meaning: 'every export format as a feed, with ETag and 304' },
];

/** /v1/*: the serving thread's, behind THREAT_MIRROR_HTTP_TOKEN when one is set. */
export const API_PREFIX = '/v1/';

/** `a, b and c` */
function listed(paths: readonly string[]): string {
  return paths.length < 2 ? paths.join('') : `${paths.slice(0, -1).join(', ')} and ${paths.at(-1)}`;
}

/** The paths answered by one thread, as a sentence names them. */
export function endpointsOf(thread: Endpoint['thread']): string {
  return listed(ENDPOINTS.filter((endpoint) => endpoint.thread === thread).map((endpoint) => endpoint.path));
}

/** What the daemon logs once it serves the port (tests and benchmarks wait for it). */
export const SERVING_LOG_MESSAGE = `serving ${listed(ENDPOINTS.map((endpoint) => endpoint.path))}`;
