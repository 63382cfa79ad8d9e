#!/usr/bin/env node
// The container's HEALTHCHECK: exit 0 when the daemon is alive (/healthz) and every organization
// has synced once since it started, or the file already held a mirror (/startupz); else 1. So
// `depends_on: {condition: service_healthy}` starts readers when there is something to read, and
// the container stays healthy while the process lives (/readyz, not this, follows each run).
import { escapeControls } from '../lib/terminal-text.js';

/** What Docker keeps of a probe's output (`docker inspect`, `docker ps` tools show it): a line, not a flood. */
const SHOWN_CHARS = 500;
const port = process.env.THREAT_MIRROR_HTTP_PORT ?? '9464';
const host = process.env.THREAT_MIRROR_HTTP_HOST === undefined || process.env.THREAT_MIRROR_HTTP_HOST === '0.0.0.0' ? '127.0.0.1' : process.env.THREAT_MIRROR_HTTP_HOST;

async function answers(path: string): Promise<boolean> {
  const response = await fetch(`http://${host}:${port}${path}`, { signal: AbortSignal.timeout(4000) });
  // Whatever answers on the port (the daemon, or another process after it died) writes the text:
  // shown with its control characters escaped and cut short, as the CLI shows a service's text.
  if (!response.ok) process.stdout.write(`${path}: ${response.status} ${escapeControls(await firstChars(response))}\n`);
  return response.ok;
}

/** The body's first SHOWN_CHARS characters, reading no more of it than they take: a body without end is not waited for, nor held. */
async function firstChars(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  // UTF-8 takes at most 4 bytes a character.
  for (let bytes = 0; bytes < 4 * SHOWN_CHARS; ) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    bytes += value.length;
  }
  await reader.cancel();
  return Buffer.concat(chunks).toString('utf8').slice(0, SHOWN_CHARS);
}

Promise.all([answers('/healthz'), answers('/startupz')]).then(
  (results) => process.exit(results.every(Boolean) ? 0 : 1),
  (error: unknown) => {
    process.stdout.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
