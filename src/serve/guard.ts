// One guard for every handler of the serving thread's listeners: what a handler throws is answered
// (HTTP 400 for a malformed request, 500 otherwise; the DNS side answers FORMERR or SERVFAIL in
// dns-server.ts), reported once to the main thread (which logs it with the route and counts it),
// and goes no further: a throw that reached the event loop ended the thread, and with it the
// daemon (one `GET /v1/exports/%` did: decodeURIComponent throws URIError).
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The listener a failure happened on, as threat_mirror_serving_errors_total labels it. */
export type ServingListener = 'http' | 'dns-udp' | 'dns-tcp';

/** One failure of a handler: where, what it was answered with, and why. Plain data: it crosses to the main thread. */
export interface ServingFailure {
  readonly listener: ServingListener;
  /** The route (an HTTP path prefix) or the DNS message's kind. */
  readonly route: string;
  /** The HTTP status or DNS response code answered ('closed': the connection was closed, nothing more could be said). */
  readonly answer: string;
  readonly message: string;
  readonly stack?: string | undefined;
}

export type ReportFailure = (failure: ServingFailure) => void;

export type HttpHandler = (request: IncomingMessage, response: ServerResponse) => void;

/** What an error says, as plain data. */
export function describeError(error: unknown): { message: string; stack?: string | undefined } {
  return error instanceof Error ? { message: error.message, stack: error.stack } : { message: String(error) };
}

/** Whether an error says the request itself is malformed: a bad percent-escape, a URL that does not parse. */
export function isMalformedRequest(error: unknown): boolean {
  return error instanceof URIError || (error instanceof TypeError && (error as { code?: unknown }).code === 'ERR_INVALID_URL');
}

/** `handler` inside the guard: a throw is answered and reported under `route`. */
export function guardHttp(route: string, handler: HttpHandler, report: ReportFailure): HttpHandler {
  return (request, response) => {
    try {
      handler(request, response);
    } catch (error) {
      answerHttpFailure(route, response, error, report);
    }
  };
}

/**
 * Answers a request whose handler failed (400 when the request is malformed, 500 otherwise) and
 * reports it; an answer already begun is cut off instead, since its status is sent.
 */
export function answerHttpFailure(route: string, response: ServerResponse, error: unknown, report: ReportFailure): void {
  const status = isMalformedRequest(error) ? 400 : 500;
  const canAnswer = !response.headersSent;
  report({ listener: 'http', route, answer: canAnswer ? String(status) : 'closed', ...describeError(error) });
  if (canAnswer) {
    const body = status === 400 ? { error: `malformed request: ${describeError(error).message}` } : { error: 'the request failed; see the daemon log' };
    response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    response.end(`${JSON.stringify(body)}\n`);
  } else response.destroy();
}
