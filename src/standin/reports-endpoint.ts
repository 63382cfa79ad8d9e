// GET /organization/reports: the organization key's reports, in the configured response shape.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StandinContext } from './context.js';
import type { Fault } from './faults.js';
import { delay, headerValue, sendJson, sendText } from './http.js';
import { Exchange } from './request-log.js';
import { jsonWithBigInts, parseReportsQuery, ReportsBadRequest, reportsPage } from './reports.js';

export const REPORTS_PATH = '/organization/reports';

export async function answerReports(context: StandinContext, request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (request.method !== 'GET') return sendJson(response, 405, { error: { code: 'METHOD_NOT_ALLOWED', message: 'use GET' } });
  const exchange = new Exchange(context.log, headerValue(request.headers['x-api-key']), REPORTS_PATH);
  const params = new URL(request.url ?? '/', 'http://standin').searchParams;
  exchange.body = Object.fromEntries(params);
  const finish = (status: number, payload: unknown, count = 0, fault?: Fault['kind']): void => {
    exchange.done(status, count, fault);
    sendJson(response, status, payload);
  };
  if (context.latencyMs > 0) await delay(context.latencyMs);
  const fault = context.faults.take(exchange.key, REPORTS_PATH);
  if (fault?.kind === 'status') return finish(fault.status, { error: { code: 'INJECTED', message: `injected ${fault.status}` } }, 0, 'status');
  if (fault?.kind === 'rateLimit') {
    if (fault.retryAfter !== undefined) response.setHeader('retry-after', fault.retryAfter);
    return finish(429, { error: { code: 'TOO_MANY_REQUESTS', message: 'Too many requests' } }, 0, 'rateLimit');
  }
  // The organization is the key's own: a user key has none to list.
  const organization = context.keys.organizationKeys[exchange.key];
  if (organization === undefined) return finish(401, { error: { code: 'UNAUTHORIZED', message: 'A valid organization API key is required' } });
  try {
    const page = reportsPage(context.reports, organization, parseReportsQuery(params, context.reportsCursorBase), context.reportsVariant, context.reportsCursorBase);
    exchange.done(200, (page.reports as unknown[]).length);
    return sendText(response, 200, jsonWithBigInts(page));
  } catch (error) {
    if (error instanceof ReportsBadRequest) return finish(400, { error: { code: 'BAD_REQUEST', message: error.message } });
    throw error;
  }
}
