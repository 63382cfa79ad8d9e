// Which handler answers a request: the control API, the reports list, or the threats list.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StandinContext } from './context.js';
import { answerControl, CONTROL_PREFIX } from './control-api.js';
import { readBody, sendJson } from './http.js';
import { answerReports, REPORTS_PATH } from './reports-endpoint.js';
import { answerThreatsList, THREATS_PATH } from './threats-endpoint.js';

export async function route(context: StandinContext, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = (request.url ?? '/').split('?')[0] ?? '/';
  const text = await readBody(request);
  if (path.startsWith(CONTROL_PREFIX)) return answerControl(context, path, request.method ?? 'GET', text, response);
  if (path === REPORTS_PATH && context.reportsEnabled) return answerReports(context, request, response);
  if (path !== THREATS_PATH) return sendJson(response, 404, { message: `no route for ${path}` });
  return answerThreatsList(context, request, response, text);
}
