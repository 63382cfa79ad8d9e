// GET /v1/lookup?value=V (repeatable) and POST /v1/lookup {"values": [...]}: the lookup command over
// HTTP, for services that do not link SQLite. Answers from its own read-only connection.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { checkLookupValues, lookupValues, type ThreatLookup } from '../commands/lookup.js';

/** A request body above this is refused: 1,000 values of a long URL each fit with room to spare. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** A refused body is read to its end up to this size, so the client gets its 413 (see below). */
const MAX_DRAINED_BYTES = 64 * 1024 * 1024;

const TOO_LARGE = { error: `request body over ${MAX_BODY_BYTES} bytes; send at most 1,000 values` };

export type LookupHandler = (request: IncomingMessage, response: ServerResponse) => void;

export function createLookupHandler(lookup: ThreatLookup, onError: (error: unknown) => void): LookupHandler {
  return (request, response) => {
    const send = (status: number, body: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      response.end(`${JSON.stringify(body)}\n`);
    };
    const answer = (values: unknown): void => {
      const problem = checkLookupValues(values);
      if (problem !== null) return send(400, { error: problem });
      lookupValues(lookup, values as string[]).then(
        (document) => send(200, document),
        (error: unknown) => {
          onError(error);
          send(500, { error: 'lookup failed; see the daemon log' });
        },
      );
    };
    if (request.method === 'GET' || request.method === 'HEAD') {
      const url = new URL(request.url ?? '/', 'http://localhost');
      const unknown = [...url.searchParams.keys()].find((key) => key !== 'value');
      if (unknown !== undefined) return send(400, { error: `unknown query parameter "${unknown}"; use value=V, repeated for several values` });
      return answer(url.searchParams.getAll('value'));
    }
    if (request.method !== 'POST') return send(405, { error: 'method not allowed; use GET ?value=V or POST {"values": [...]}' });
    let chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      if (response.headersSent) return; // cut off at MAX_DRAINED_BYTES: the rest is dropped
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) {
        chunks.push(chunk);
        return;
      }
      chunks = [];
      // The 413 waits for the end of the body, read and dropped: a client still sending when the
      // connection closed would see a broken pipe (EPIPE) instead of the answer. A body that
      // goes on much longer is cut off with the 413 and the connection closed.
      if (size > MAX_DRAINED_BYTES) {
        response.setHeader('connection', 'close');
        send(413, TOO_LARGE);
      }
    });
    request.on('end', () => {
      if (response.headersSent) return;
      if (size > MAX_BODY_BYTES) return send(413, TOO_LARGE);
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return send(400, { error: 'body must be JSON: {"values": ["…"]}' });
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body) || !('values' in body)) return send(400, { error: 'body must be an object with "values": ["…"]' });
      answer((body as { values: unknown }).values);
    });
  };
}
