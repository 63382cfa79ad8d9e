#!/usr/bin/env node
// The container's HEALTHCHECK: exit 0 when the daemon's /healthz answers 200, else 1.
const port = process.env.THREAT_MIRROR_HTTP_PORT ?? '9464';
const host = process.env.THREAT_MIRROR_HTTP_HOST === undefined || process.env.THREAT_MIRROR_HTTP_HOST === '0.0.0.0' ? '127.0.0.1' : process.env.THREAT_MIRROR_HTTP_HOST;

fetch(`http://${host}:${port}/healthz`, { signal: AbortSignal.timeout(4000) }).then(
  (response) => process.exit(response.ok ? 0 : 1),
  () => process.exit(1),
);
