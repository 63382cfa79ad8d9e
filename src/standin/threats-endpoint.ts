// POST /threats/list: a page of the threats a key may see, with the fault the test asked for.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StandinContext } from './context.js';
import type { Fault } from './faults.js';
import { delay, headerValue, sendJson, sendText } from './http.js';
import { Exchange } from './request-log.js';
import { BadRequest, parseThreatQuery, type ThreatQuery } from './threat-query.js';
import { atOffset } from './timestamps.js';

export const THREATS_PATH = '/threats/list';
const UNAUTHORIZED = { message: 'A valid API key is required' };

type Finish = (status: number, payload: unknown, threats?: number, fault?: Fault['kind'], ids?: readonly number[]) => void;

/** One request's way back: its log entry, its response, and the usual record-and-send. */
interface Reply {
  readonly exchange: Exchange;
  readonly response: ServerResponse;
  readonly finish: Finish;
}

export async function answerThreatsList(context: StandinContext, request: IncomingMessage, response: ServerResponse, text: string): Promise<void> {
  if (request.method !== 'POST') return sendJson(response, 405, { message: 'use POST' });
  const exchange = new Exchange(context.log, headerValue(request.headers['x-api-key']), THREATS_PATH);
  const finish: Finish = (status, payload, threats = 0, fault, ids) => {
    exchange.done(status, threats, fault, ids);
    sendJson(response, status, payload);
  };
  const reply: Reply = { exchange, response, finish };
  try {
    exchange.body = text === '' ? {} : (JSON.parse(text) as unknown);
  } catch {
    return finish(400, { message: 'body is not valid JSON' });
  }
  if (context.latencyMs > 0) await delay(context.latencyMs);
  const fault = context.listEvents.faultFor(exchange.key, exchange.body) ?? context.faults.take(exchange.key, THREATS_PATH);
  if (fault && (await answeredByFault(context, fault, reply))) return;
  const organizations = context.threats.visibleOrganizations(exchange.key);
  if (!organizations) return finish(401, UNAUTHORIZED);
  let query: ThreatQuery;
  try {
    query = parseThreatQuery(exchange.body, context.now());
  } catch (error) {
    if (error instanceof BadRequest) return finish(400, { message: error.message });
    throw error;
  }
  const list = context.threats.list(organizations, query);
  const offset = (query.page - 1) * query.perPage;
  const shown = context.blockedAtOffset;
  const page: unknown[] = list
    .slice(offset, offset + query.perPage)
    .map(({ id, content, type, blockedAt }) => ({ id, content, type, blockedAt: shown === undefined ? blockedAt : atOffset(blockedAt, shown) }));
  const nextPage = offset + query.perPage < list.length ? String(query.page + 1) : null;
  // The page is read: a change timed after it is what the walk's next request sees.
  context.listEvents.served(exchange.key, exchange.body, context.threats);
  answerPage(reply, { page, nextPage, query }, deferIfNoRoom(context, fault, page.length, query.perPage));
}

/**
 * Records a fault adds go on the first page with room for them: a page of more than per_page
 * records is a broken response the client retries, and no displaced record may be lost.
 */
function deferIfNoRoom(context: StandinContext, fault: Fault | undefined, records: number, perPage: number): Fault | undefined {
  const added = fault?.kind === 'invalidRecords' ? (fault.count ?? 2) : fault?.kind === 'rawRecords' ? fault.records.length : 0;
  if (fault === undefined || added === 0 || records + added <= perPage) return fault;
  context.faults.putBack(fault, { path: THREATS_PATH });
  return undefined;
}

/**
 * Faults that act before the page is read: true when the fault has answered (or dropped, or is
 * holding) the request; false when the usual answer follows, perhaps with headers or after a wait.
 */
async function answeredByFault(context: StandinContext, fault: Fault, { exchange, response, finish }: Reply): Promise<boolean> {
  switch (fault.kind) {
    case 'status':
      finish(fault.status, { message: fault.message ?? `injected ${fault.status}` }, 0, 'status');
      return true;
    case 'redirect':
      response.setHeader('location', fault.location);
      finish(fault.status, { message: `moved to ${fault.location}` }, 0, 'redirect');
      return true;
    case 'deprecation':
      if (fault.deprecation !== undefined) response.setHeader('deprecation', fault.deprecation);
      if (fault.sunset !== undefined) response.setHeader('sunset', fault.sunset);
      return false;
    case 'rateLimit': {
      const retryAfterMs = retryAfterToMs(fault.retryAfter);
      if (retryAfterMs > 0) context.log.pauseAfterDelivery(exchange.key, response, retryAfterMs);
      if (fault.retryAfter !== undefined) response.setHeader('retry-after', fault.retryAfter);
      finish(429, { message: 'Too many requests' }, 0, 'rateLimit');
      return true;
    }
    case 'drop':
      exchange.done(0, 0, 'drop');
      response.req.socket.destroy();
      return true;
    case 'hang':
      exchange.record(0, 0, 'hang');
      context.hanging.add(response);
      response.on('close', () => {
        if (context.hanging.delete(response)) context.log.depart(exchange.key);
      });
      return true;
    case 'delay':
      await delay(fault.ms);
      return false;
    default:
      return false;
  }
}

/** The page as the service sends it, or bent by a fault that acts on the page itself. */
function answerPage({ exchange, response, finish }: Reply, selected: { page: unknown[]; nextPage: string | null; query: ThreatQuery }, fault: Fault | undefined): void {
  const { page, query } = selected;
  let { nextPage } = selected;
  if (fault?.kind === 'repeatCursor') nextPage = String(query.page);
  if (fault?.kind === 'invalidRecords') page.push(...invalidRecords(fault.count ?? 2));
  if (fault?.kind === 'badCursor' || fault?.kind === 'rawRecords') {
    // Written by hand: a cursor of any JSON type, and records whose digits JSON.stringify would round.
    const records = [...page.map((record) => JSON.stringify(record)), ...(fault.kind === 'rawRecords' ? fault.records : [])];
    const cursor = fault.kind === 'badCursor' ? fault.value : nextPage;
    exchange.done(200, page.length, fault.kind);
    return sendText(response, 200, `{"threats":[${records.join(',')}],"next_page":${JSON.stringify(cursor) ?? 'null'}}`);
  }
  const payload = { threats: page, next_page: nextPage };
  if (fault?.kind === 'truncate') {
    const json = JSON.stringify(payload);
    exchange.done(200, 0, 'truncate');
    // Chunked, so the client sees a clean end of a body that is not whole JSON.
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(json.slice(0, Math.floor(json.length / 2)));
    return;
  }
  if (fault?.kind === 'oversize') {
    const padding = 'x'.repeat(Math.max(0, fault.bytes - 64));
    return finish(200, { ...payload, padding }, page.length, 'oversize');
  }
  // Recorded for tests that judge a reader's view by the pages the service sent (whole or absent).
  const whole = fault === undefined || fault.kind === 'deprecation' || fault.kind === 'delay';
  finish(200, payload, page.length, fault?.kind, whole ? page.map((record) => (record as { id: number }).id) : undefined);
}

function invalidRecords(count: number): unknown[] {
  const samples: unknown[] = [
    { id: 'abc', content: 'https://bad-id.example', type: 'URL', blockedAt: '2024-01-01T00:00:00.000Z' },
    { id: -5, content: 'https://negative.example', type: 'URL', blockedAt: '2024-01-01T00:00:00.000Z' },
    { id: 42, type: 'URL', blockedAt: '2024-01-01T00:00:00.000Z' },
    { id: 43, content: 'https://when.example', type: 'URL', blockedAt: 'yesterday' },
    { id: 44, content: 12345, type: 'URL', blockedAt: '2024-01-01T00:00:00.000Z' },
    'not even an object',
  ];
  return Array.from({ length: count }, (_, index) => samples[index % samples.length]);
}

function retryAfterToMs(value: string | undefined): number {
  if (value === undefined) return 0;
  if (/^-?\d+(\.\d+)?$/.test(value.trim())) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? 0 : date - Date.now();
}
