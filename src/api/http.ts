// One JSON POST/GET with a timeout and a body-size cap; turns every failure into a typed error.
import http from 'node:http';
import https from 'node:https';
import { redact } from '../lib/redact.js';
import { PermanentApiError, RetryableApiError } from './errors.js';
import { jsonShapeProblem } from './json-shape.js';

export interface HttpRequest {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: unknown;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  /** Aborts on shutdown; the abort reason is rethrown as is, never retried. */
  readonly signal?: AbortSignal | undefined;
  /** Names the organization in messages. */
  readonly label: string;
  /** Called for every response that carries a Deprecation or Sunset header (RFC 8594). */
  readonly onDeprecation?: ((notice: DeprecationNotice) => void) | undefined;
}

export interface DeprecationNotice {
  readonly deprecation: string | null;
  readonly sunset: string | null;
}

/**
 * Turns a 200 body into what the caller keeps, synchronously: the parsed JSON and the text as
 * received (its numbers keep every digit, which `json` may have lost beyond 2^53). Neither outlives
 * the call, so a page's text is never held across an await while other responses are parsed: the
 * CLI's heap is capped at 48 MB and a page may be 4 MiB.
 */
export type BodyReader<T> = (json: unknown, text: string) => T;

export async function requestJson<T>(request: HttpRequest, read: BodyReader<T>, now: () => number = Date.now): Promise<T> {
  const timeout = AbortSignal.timeout(request.timeoutMs);
  const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
  try {
    const response = await exchange(request, signal);
    const status = response.statusCode ?? 0;
    reportDeprecation(response, request);
    if (status >= 300 && status < 400) {
      response.destroy();
      throw redirectError(status, header(response, 'location'), request);
    }
    if (status === 200) {
      const text = await readBodyCapped(response, request);
      const shape = jsonShapeProblem(text);
      if (shape !== undefined) throw new RetryableApiError(`${request.label}: response body ${shape}; no page of the service does`, 'bad_body');
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw new RetryableApiError(`${request.label}: response body is not valid JSON (${text.length} characters; truncated?)`, 'bad_body');
      }
      return read(json, text);
    }
    // A retryable status needs no body: failing at once lets a 429 pause the key sooner.
    const retryable = status === 408 || status === 429 || status >= 500;
    const detail = retryable ? '' : await readErrorDetail(response, request);
    if (retryable) response.destroy();
    throw errorForStatus(status, header(response, 'retry-after'), detail, request.label, now());
  } catch (error) {
    if (request.signal?.aborted) throw request.signal.reason;
    if (error instanceof RetryableApiError || error instanceof PermanentApiError) throw error;
    if (timeout.aborted) {
      throw new RetryableApiError(`${request.label}: no complete response within ${request.timeoutMs} ms`, 'timeout');
    }
    // Refused, reset or dropped connections, TLS failures, a body cut short.
    throw new RetryableApiError(`${request.label}: network error: ${describeNetworkError(error)}`, 'network', undefined, { cause: error });
  }
}

/**
 * Connections kept open between requests: a window's next page goes out on the socket its last
 * one came back on. node:http rather than fetch: fetch's web streams cost ~1 ms of CPU per page
 * against ~0.4 ms here, and loading undici ~30 ms of every start (measured against the stand-in,
 * 2,056 pages of 100 threats, 4 in flight).
 */
const AGENTS = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) } as const;

/**
 * Sends the request and resolves with the response once its headers are in; the body is read by
 * the caller. node:http never follows a redirect, so a Location is seen, never followed:
 * following would send the key wherever the answer points.
 */
function exchange(request: HttpRequest, signal: AbortSignal): Promise<http.IncomingMessage> {
  const url = new URL(request.url);
  const body = request.body === undefined ? undefined : JSON.stringify(request.body);
  const headers: Record<string, string> = { ...request.headers };
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const options = { method: request.method, headers, signal };
    const outgoing = url.protocol === 'https:' ? https.request(url, { ...options, agent: AGENTS['https:'] }, resolve) : http.request(url, { ...options, agent: AGENTS['http:'] }, resolve);
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

function header(response: http.IncomingMessage, name: string): string | null {
  const value = response.headers[name];
  return Array.isArray(value) ? value.join(', ') : (value ?? null);
}

function reportDeprecation(response: http.IncomingMessage, request: HttpRequest): void {
  const deprecation = header(response, 'deprecation');
  const sunset = header(response, 'sunset');
  if (deprecation !== null || sunset !== null) request.onDeprecation?.({ deprecation, sunset });
}

/**
 * Every redirect fails the request, never retried: the service documents none, so one means the
 * base URL is wrong (or someone else answers), and the fix is THREAT_MIRROR_API_URL. Another
 * origin is named by its origin only (a path or query may carry tokens); the same origin by its
 * path too, since that is what differs.
 */
function redirectError(status: number, location: string | null, request: HttpRequest): PermanentApiError {
  if (location === null) return new PermanentApiError(`${request.label}: redirect ${status} without a Location header; check THREAT_MIRROR_API_URL`, status);
  let target: URL;
  try {
    target = new URL(location, request.url);
  } catch {
    return new PermanentApiError(`${request.label}: redirect ${status} to an unreadable Location; check THREAT_MIRROR_API_URL`, status);
  }
  if (target.origin !== new URL(request.url).origin) {
    return new PermanentApiError(
      `${request.label}: redirect ${status} to ${target.origin}, another origin: not followed, so the API key is not sent there; check THREAT_MIRROR_API_URL`,
      status,
    );
  }
  return new PermanentApiError(
    `${request.label}: redirect ${status} to ${target.origin}${target.pathname} (same origin): redirects are not followed; set THREAT_MIRROR_API_URL to the address the service answers at`,
    status,
  );
}

function errorForStatus(status: number, retryAfter: string | null, detail: string, label: string, nowMs: number): Error {
  const suffix = detail === '' ? '' : `: ${detail}`;
  if (status === 401 || status === 403) {
    return new PermanentApiError(`${label}: the API key is invalid or lacks permission (HTTP ${status})${suffix}`, status);
  }
  if (status === 429) {
    return new RetryableApiError(`${label}: rate limited (HTTP 429)`, 'status_429', parseRetryAfter(retryAfter, nowMs));
  }
  if (status === 408) return new RetryableApiError(`${label}: request timeout (HTTP 408)`, 'status_408', parseRetryAfter(retryAfter, nowMs));
  if (status >= 500) {
    return new RetryableApiError(`${label}: server error (HTTP ${status})${suffix}`, 'status_5xx', parseRetryAfter(retryAfter, nowMs));
  }
  return new PermanentApiError(`${label}: the service refused the request (HTTP ${status})${suffix}`, status);
}

/** Retry-After as seconds or an HTTP date; zero, negative, past or unparsable → undefined (use the backoff floor). */
export function parseRetryAfter(header: string | null, nowMs: number): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const trimmed = header.trim();
  const ms = /^-?\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) * 1000 : Date.parse(trimmed) - nowMs;
  return Number.isFinite(ms) && ms > 0 ? Math.ceil(ms) : undefined;
}

/** The whole body as text, failing as soon as it passes the cap or the connection ends before it does. */
function readBodyCapped(response: http.IncomingMessage, request: HttpRequest): Promise<string> {
  return readBody(response, request.maxResponseBytes, () => tooLarge(request));
}

function readBody(response: http.IncomingMessage, maxBytes: number, tooLong: () => Error): Promise<string> {
  const declared = Number(response.headers['content-length'] ?? NaN);
  if (declared > maxBytes) {
    response.destroy();
    return Promise.reject(tooLong());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > maxBytes) {
        response.destroy();
        reject(tooLong());
        return;
      }
      chunks.push(chunk);
    });
    response.on('end', () => resolve(Buffer.concat(chunks, size).toString('utf8')));
    response.on('error', reject);
    // A connection closed mid-body ends the stream without 'end'.
    response.on('close', () => {
      if (!response.complete) reject(new Error('the connection closed before the response was complete'));
    });
  });
}

function tooLarge(request: HttpRequest): RetryableApiError {
  return new RetryableApiError(`${request.label}: response body exceeds ${request.maxResponseBytes} bytes (THREAT_MIRROR_MAX_RESPONSE_BYTES)`, 'too_large');
}

/** An error body's message is a sentence: a larger body is not read for one. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** A short, single-line excerpt of an error body: enough to say why, never a wall of HTML. */
async function readErrorDetail(response: http.IncomingMessage, request: HttpRequest): Promise<string> {
  let text: string;
  try {
    text = await readBody(response, MAX_ERROR_BODY_BYTES, () => new Error('error body too large'));
  } catch {
    return '';
  }
  let message = text;
  try {
    if (jsonShapeProblem(text) !== undefined) throw new Error('not a plain error body');
    const parsed = JSON.parse(text) as { message?: unknown; error?: { message?: unknown } };
    const candidate = parsed.message ?? parsed.error?.message;
    if (typeof candidate === 'string') message = candidate;
  } catch {
    // not JSON: keep the raw text
  }
  // Redacted before it is cut: a cut could leave part of an echoed key that redact() cannot recognize.
  return redact(message).replace(/\s+/g, ' ').trim().slice(0, 200);
}

function describeNetworkError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
  }
  return String(error);
}
