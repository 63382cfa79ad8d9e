// /__standin/*: the control API, for a stand-in run as its own process (the container check, the demo).
import type { ServerResponse } from 'node:http';
import type { StandinContext } from './context.js';
import type { StandinThreat } from './data.js';
import type { Fault } from './faults.js';
import { sendJson } from './http.js';
import { listEventControl } from './list-events.js';
import { isOffset } from './timestamps.js';

export const CONTROL_PREFIX = '/__standin/';

export function answerControl(context: StandinContext, path: string, method: string, text: string, response: ServerResponse): void {
  const { log, threats, faults } = context;
  if (path === '/__standin/stats' && method === 'GET') {
    const byStatus: Record<string, number> = {};
    for (const record of log.requests) byStatus[record.status] = (byStatus[record.status] ?? 0) + 1;
    return sendJson(response, 200, { requests: log.requests.length, byStatus, maxInFlight: log.maxInFlight(), earlyRequests: log.earlyRequests(), threats: threats.size });
  }
  // The request log, for checks from outside the process (the container check's resume test).
  if (path === '/__standin/requests' && method === 'GET') return sendJson(response, 200, { requests: log.requests });
  if (method !== 'POST') return sendJson(response, 405, { message: 'use POST' });
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    return sendJson(response, 400, { message: 'body is not valid JSON' });
  }
  const answered = listEventControl(path, body, threats, context.listEvents);
  if (answered) return sendJson(response, answered.status, answered.payload);
  if (path === '/__standin/threats') {
    if (!Array.isArray(body)) return sendJson(response, 400, { message: 'send an array of threats' });
    threats.add(body as StandinThreat[]);
    return sendJson(response, 200, { threats: threats.size });
  }
  if (path === '/__standin/timestamps') {
    const { offset } = (body ?? {}) as { offset?: unknown };
    if (offset !== null && (typeof offset !== 'string' || !isOffset(offset))) return sendJson(response, 400, { message: 'send {"offset": "+05:00"} or {"offset": null}' });
    context.blockedAtOffset = offset ?? undefined;
    return sendJson(response, 200, { offset });
  }
  if (path === '/__standin/faults') {
    const request = body as { clear?: boolean; fault?: Fault; times?: number; key?: string; probability?: number };
    if (request.clear) faults.clear();
    else if (request.fault && request.probability !== undefined) faults.setRandom(request.fault, request.probability, request.key === undefined ? {} : { key: request.key });
    else if (request.fault) faults.enqueue(request.fault, { times: request.times ?? 1, ...(request.key === undefined ? {} : { key: request.key }) });
    else return sendJson(response, 400, { message: 'send {"fault": {...}, "times"?, "key"?, "probability"?} or {"clear": true}' });
    return sendJson(response, 200, { ok: true });
  }
  sendJson(response, 404, { message: `no admin route ${path}` });
}
