#!/usr/bin/env node
// The container's HEALTHCHECK: exit 0 when the daemon is alive (/healthz) and every organization
// has synced once since it started, or the file already held a mirror (/startupz); else 1. So
// `depends_on: {condition: service_healthy}` starts readers when there is something to read, and
// the container stays healthy while the process lives (/readyz, not this, follows each run).
// node:http, not fetch: Docker runs this probe inside the container's memory limit every 5 s, and
// fetch loads undici (12.2 MB anonymous at exit against 7.4 MB for node:http; measured in the image).
import { get, type IncomingMessage } from 'node:http';
import { escapeControls } from '../lib/terminal-text.js';

/** What Docker keeps of a probe's output (`docker inspect`, `docker ps` tools show it): a line, not a flood. */
const SHOWN_CHARS = 500;
const TIMEOUT_MS = 4000;
const port = process.env.THREAT_MIRROR_HTTP_PORT ?? '9464';
const host = process.env.THREAT_MIRROR_HTTP_HOST === undefined || process.env.THREAT_MIRROR_HTTP_HOST === '0.0.0.0' ? '127.0.0.1' : process.env.THREAT_MIRROR_HTTP_HOST;

function answers(path: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const request = get({ host, port, path }, (response) => {
      const ok = response.statusCode !== undefined && response.statusCode >= 200 && response.statusCode < 300;
      if (ok) {
        response.resume();
        resolve(true);
        return;
      }
      // Whatever answers on the port (the daemon, or another process after it died) writes the text:
      // shown with its control characters escaped and cut short, as the CLI shows a service's text.
      firstChars(response).then((text) => {
        process.stdout.write(`${path}: ${response.statusCode} ${escapeControls(text)}\n`);
        resolve(false);
      }, reject);
    });
    // One deadline for the whole answer, its body included: a body dripping a byte at a time never
    // lets a socket go idle, and is not waited for either.
    const deadline = setTimeout(() => request.destroy(new Error(`${path}: no answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
    deadline.unref();
    request.on('error', reject);
  });
}

/** The body's first SHOWN_CHARS characters, reading no more of it than they take: a body without end is not waited for, nor held. */
function firstChars(response: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const done = (): void => {
      response.destroy();
      resolve(Buffer.concat(chunks).toString('utf8').slice(0, SHOWN_CHARS));
    };
    response.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      bytes += chunk.length;
      // UTF-8 takes at most 4 bytes a character.
      if (bytes >= 4 * SHOWN_CHARS) done();
    });
    response.on('end', done);
    response.on('error', done);
    response.on('close', done);
  });
}

Promise.all([answers('/healthz'), answers('/startupz')]).then(
  (results) => process.exit(results.every(Boolean) ? 0 : 1),
  (error: unknown) => {
    process.stdout.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
