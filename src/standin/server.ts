// A real HTTP server on 127.0.0.1 that behaves like the service (threats-api.md) over generated
// data, with switchable faults, request accounting, and a way to change the data while a sync runs.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { addDays, daysBetween } from '../lib/days.js';
import type { StandinThreat } from './data.js';
import { type Fault, FaultController } from './faults.js';
import { parseReportsQuery, ReportsBadRequest, reportsPage, type ReportsVariant, type StandinReport } from './reports.js';
import { BadRequest, compareBy, matches, parseThreatQuery, type ThreatQuery } from './threat-query.js';

export interface StandinKeys {
  /** key → organization */
  readonly organizationKeys: Readonly<Record<string, string>>;
  /** key → memberships; only active ones grant access */
  readonly userKeys: Readonly<Record<string, ReadonlyArray<{ organization: string; active: boolean }>>>;
}

export interface StandinOptions {
  readonly host?: string;
  readonly port?: number;
  readonly threats?: readonly StandinThreat[];
  readonly keys: StandinKeys;
  /** "today" for the default date window. */
  readonly now?: () => Date;
  readonly latencyMs?: number;
  readonly seed?: number;
  readonly reports?: readonly StandinReport[];
  /** Which of the documented response shapes GET /organization/reports answers with. */
  readonly reportsVariant?: ReportsVariant;
  /** false: a deployment without GET /organization/reports (404). */
  readonly reportsEnabled?: boolean;
}

export interface RequestRecord {
  readonly at: number;
  readonly key: string;
  readonly path: string;
  readonly body: unknown;
  readonly status: number;
  readonly fault?: Fault['kind'];
  readonly threats: number;
}

export interface StandinStats {
  readonly requests: readonly RequestRecord[];
  inFlight(key?: string): number;
  maxInFlight(key?: string): number;
  /** Requests that arrived before a Retry-After given to their key had passed. */
  earlyRequests(key?: string): number;
  reset(): void;
}

export interface Standin {
  readonly url: string;
  readonly faults: FaultController;
  readonly stats: StandinStats;
  addThreats(threats: readonly StandinThreat[]): void;
  removeThreats(ids: readonly number[]): void;
  updateThreat(id: number, patch: Partial<Pick<StandinThreat, 'content' | 'type' | 'blockedAt'>>): void;
  /** Everything a key may see, all dates, by id: what a complete mirror holds. */
  threatsVisibleTo(key: string): StandinThreat[];
  setLatency(ms: number): void;
  /** Reports of an organization's key, newest first, as stored (not in a response shape). */
  reportsOf(organization: string): StandinReport[];
  updateReport(id: number, change: (report: StandinReport) => void): void;
  addReports(reports: readonly StandinReport[]): void;
  setReportsVariant(variant: ReportsVariant): void;
  setReportsEnabled(enabled: boolean): void;
  /** Resolves once `count` requests have arrived in all. */
  waitForRequests(count: number): Promise<void>;
  close(): Promise<void>;
}

const UNAUTHORIZED = { message: 'A valid API key is required' };
/**
 * A request that arrives this soon after a 429 was delivered may have been sent before the client
 * read it; only later arrivals before the Retry-After deadline count as early.
 */
export const EARLY_REQUEST_GRACE_MS = 100;
const CACHE_ENTRIES = 64;

export async function startStandin(options: StandinOptions): Promise<Standin> {
  const now = options.now ?? (() => new Date());
  const faults = new FaultController(options.seed ?? 1);
  const threatsById = new Map<number, StandinThreat>();
  /** organization → day → threats of that day */
  const byDay = new Map<string, Map<string, StandinThreat[]>>();
  let version = 0;
  const cache = new Map<string, { version: number; list: StandinThreat[] }>();
  let latencyMs = options.latencyMs ?? 0;
  const reports: StandinReport[] = [...(options.reports ?? [])];
  let reportsVariant: ReportsVariant = options.reportsVariant ?? 'cursor';
  let reportsEnabled = options.reportsEnabled ?? true;

  const index = (threat: StandinThreat): void => {
    let days = byDay.get(threat.organization);
    if (!days) byDay.set(threat.organization, (days = new Map()));
    const day = threat.blockedAt.slice(0, 10);
    const list = days.get(day);
    if (list) list.push(threat);
    else days.set(day, [threat]);
  };
  const unindex = (threat: StandinThreat): void => {
    const list = byDay.get(threat.organization)?.get(threat.blockedAt.slice(0, 10));
    if (!list) return;
    const position = list.indexOf(threat);
    if (position >= 0) list.splice(position, 1);
  };
  const addThreats = (threats: readonly StandinThreat[]): void => {
    for (const threat of threats) {
      const previous = threatsById.get(threat.id);
      if (previous) unindex(previous);
      threatsById.set(threat.id, threat);
      index(threat);
    }
    version += 1;
  };
  addThreats(options.threats ?? []);

  const visibleOrganizations = (key: string): string[] | undefined => {
    const organization = options.keys.organizationKeys[key];
    if (organization !== undefined) return [organization];
    const memberships = options.keys.userKeys[key]?.filter((membership) => membership.active).map((membership) => membership.organization);
    return memberships && memberships.length > 0 ? memberships : undefined;
  };

  const listFor = (organizations: string[], query: ThreatQuery): StandinThreat[] => {
    const cacheKey = JSON.stringify([organizations, query.startDate, query.endDate, query.assetType, query.query, query.sorting]);
    const hit = cache.get(cacheKey);
    if (hit && hit.version === version) {
      cache.delete(cacheKey);
      cache.set(cacheKey, hit);
      return hit.list;
    }
    const list: StandinThreat[] = [];
    const days = daysBetween(query.startDate, query.endDate);
    for (const organization of organizations) {
      const perDay = byDay.get(organization);
      if (!perDay) continue;
      for (let offset = 0; offset < days; offset += 1) {
        for (const threat of perDay.get(addDays(query.startDate, offset)) ?? []) if (matches(threat, query)) list.push(threat);
      }
    }
    list.sort(compareBy(query.sorting));
    cache.set(cacheKey, { version, list });
    if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
    return list;
  };

  // Accounting
  let requests: RequestRecord[] = [];
  const inFlight = new Map<string, number>();
  const maxInFlight = new Map<string, number>();
  let totalInFlight = 0;
  let maxTotalInFlight = 0;
  /** When a 429 was delivered to each key, and the time it asked the key to wait until. */
  const retryAfterUntil = new Map<string, { deliveredAt: number; until: number }>();
  const early = new Map<string, number>();
  let arrived = 0;
  const arrivalWaiters: Array<{ count: number; resolve: () => void }> = [];
  const openSockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();

  const arrive = (key: string): void => {
    arrived += 1;
    const pause = retryAfterUntil.get(key);
    const now = Date.now();
    if (pause && now > pause.deliveredAt + EARLY_REQUEST_GRACE_MS && now < pause.until) early.set(key, (early.get(key) ?? 0) + 1);
    const current = (inFlight.get(key) ?? 0) + 1;
    inFlight.set(key, current);
    maxInFlight.set(key, Math.max(maxInFlight.get(key) ?? 0, current));
    totalInFlight += 1;
    maxTotalInFlight = Math.max(maxTotalInFlight, totalInFlight);
    for (const waiter of arrivalWaiters.filter((entry) => arrived >= entry.count)) {
      arrivalWaiters.splice(arrivalWaiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  const depart = (key: string): void => {
    inFlight.set(key, (inFlight.get(key) ?? 1) - 1);
    totalInFlight -= 1;
  };

  const server: Server = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, 500, { message: String(error) });
    });
  });
  server.on('connection', (socket) => {
    openSockets.add(socket);
    socket.on('close', () => openSockets.delete(socket));
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    const text = await readBody(request);
    if (path.startsWith('/__standin/')) return handleAdmin(path, request.method ?? 'GET', text, response);
    if (path === '/organization/reports' && reportsEnabled) return handleReports(request, response);
    if (path !== '/threats/list') return sendJson(response, 404, { message: `no route for ${path}` });
    if (request.method !== 'POST') return sendJson(response, 405, { message: 'use POST' });
    const key = headerValue(request.headers['x-api-key']);
    arrive(key);
    let body: unknown;
    const finish = (status: number, payload: unknown, threats = 0, fault?: Fault['kind']): void => {
      requests.push({ at: Date.now(), key, path, body, status, threats, ...(fault ? { fault } : {}) });
      depart(key);
      sendJson(response, status, payload);
    };
    try {
      body = text === '' ? {} : (JSON.parse(text) as unknown);
    } catch {
      return finish(400, { message: 'body is not valid JSON' });
    }
    if (latencyMs > 0) await delay(latencyMs);
    const fault = faults.take(key, path);
    if (fault) {
      switch (fault.kind) {
        case 'status':
          return finish(fault.status, { message: fault.message ?? `injected ${fault.status}` }, 0, 'status');
        case 'redirect':
          response.setHeader('location', fault.location);
          return finish(fault.status, { message: `moved to ${fault.location}` }, 0, 'redirect');
        case 'deprecation':
          if (fault.deprecation !== undefined) response.setHeader('deprecation', fault.deprecation);
          if (fault.sunset !== undefined) response.setHeader('sunset', fault.sunset);
          break;
        case 'rateLimit': {
          const retryAfterMs = retryAfterToMs(fault.retryAfter);
          if (retryAfterMs > 0) {
            response.once('finish', () => {
              const deliveredAt = Date.now();
              const until = Math.max(retryAfterUntil.get(key)?.until ?? 0, deliveredAt + retryAfterMs);
              retryAfterUntil.set(key, { deliveredAt, until });
            });
          }
          if (fault.retryAfter !== undefined) response.setHeader('retry-after', fault.retryAfter);
          return finish(429, { message: 'Too many requests' }, 0, 'rateLimit');
        }
        case 'drop':
          requests.push({ at: Date.now(), key, path, body, status: 0, threats: 0, fault: 'drop' });
          depart(key);
          request.socket.destroy();
          return;
        case 'hang':
          requests.push({ at: Date.now(), key, path, body, status: 0, threats: 0, fault: 'hang' });
          hanging.add(response);
          response.on('close', () => {
            if (hanging.delete(response)) depart(key);
          });
          return;
        case 'delay':
          await delay(fault.ms);
          break;
        default:
          break;
      }
    }
    const organizations = visibleOrganizations(key);
    if (!organizations) return finish(401, UNAUTHORIZED);
    let query: ThreatQuery;
    try {
      query = parseThreatQuery(body, now());
    } catch (error) {
      if (error instanceof BadRequest) return finish(400, { message: error.message });
      throw error;
    }
    const list = listFor(organizations, query);
    const offset = (query.page - 1) * query.perPage;
    const page: unknown[] = list.slice(offset, offset + query.perPage).map(({ id, content, type, blockedAt }) => ({ id, content, type, blockedAt }));
    let nextPage = offset + query.perPage < list.length ? String(query.page + 1) : null;
    if (fault?.kind === 'repeatCursor') nextPage = String(query.page);
    if (fault?.kind === 'invalidRecords') page.push(...invalidRecords(fault.count ?? 2));
    if (fault?.kind === 'badCursor' || fault?.kind === 'rawRecords') {
      // Written by hand: a cursor of any JSON type, and records whose digits JSON.stringify would round.
      const records = [...page.map((record) => JSON.stringify(record)), ...(fault.kind === 'rawRecords' ? fault.records : [])];
      const cursor = fault.kind === 'badCursor' ? fault.value : nextPage;
      requests.push({ at: Date.now(), key, path, body, status: 200, threats: page.length, fault: fault.kind });
      depart(key);
      return sendText(response, 200, `{"threats":[${records.join(',')}],"next_page":${JSON.stringify(cursor) ?? 'null'}}`);
    }
    const payload = { threats: page, next_page: nextPage };
    if (fault?.kind === 'truncate') {
      const json = JSON.stringify(payload);
      requests.push({ at: Date.now(), key, path, body, status: 200, threats: 0, fault: 'truncate' });
      depart(key);
      // Chunked, so the client sees a clean end of a body that is not whole JSON.
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(json.slice(0, Math.floor(json.length / 2)));
      return;
    }
    if (fault?.kind === 'oversize') {
      const padding = 'x'.repeat(Math.max(0, fault.bytes - 64));
      return finish(200, { ...payload, padding }, page.length, 'oversize');
    }
    finish(200, payload, page.length, fault?.kind);
  }

  async function handleReports(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.method !== 'GET') return sendJson(response, 405, { error: { code: 'METHOD_NOT_ALLOWED', message: 'use GET' } });
    const key = headerValue(request.headers['x-api-key']);
    const path = '/organization/reports';
    arrive(key);
    const params = new URL(request.url ?? '/', 'http://standin').searchParams;
    const finish = (status: number, payload: unknown, count = 0, fault?: Fault['kind']): void => {
      requests.push({ at: Date.now(), key, path, body: Object.fromEntries(params), status, threats: count, ...(fault ? { fault } : {}) });
      depart(key);
      sendJson(response, status, payload);
    };
    if (latencyMs > 0) await delay(latencyMs);
    const fault = faults.take(key, path);
    if (fault?.kind === 'status') return finish(fault.status, { error: { code: 'INJECTED', message: `injected ${fault.status}` } }, 0, 'status');
    if (fault?.kind === 'rateLimit') {
      if (fault.retryAfter !== undefined) response.setHeader('retry-after', fault.retryAfter);
      return finish(429, { error: { code: 'TOO_MANY_REQUESTS', message: 'Too many requests' } }, 0, 'rateLimit');
    }
    // The organization is the key's own: a user key has none to list.
    const organization = options.keys.organizationKeys[key];
    if (organization === undefined) return finish(401, { error: { code: 'UNAUTHORIZED', message: 'A valid organization API key is required' } });
    try {
      const page = reportsPage(reports, organization, parseReportsQuery(params), reportsVariant);
      return finish(200, page, (page.reports as unknown[]).length);
    } catch (error) {
      if (error instanceof ReportsBadRequest) return finish(400, { error: { code: 'BAD_REQUEST', message: error.message } });
      throw error;
    }
  }

  function handleAdmin(path: string, method: string, text: string, response: ServerResponse): void {
    if (path === '/__standin/stats' && method === 'GET') {
      const byStatus: Record<string, number> = {};
      for (const record of requests) byStatus[record.status] = (byStatus[record.status] ?? 0) + 1;
      return sendJson(response, 200, { requests: requests.length, byStatus, maxInFlight: maxTotalInFlight, earlyRequests: stats.earlyRequests(), threats: threatsById.size });
    }
    // The request log, for checks from outside the process (the container check's resume test).
    if (path === '/__standin/requests' && method === 'GET') return sendJson(response, 200, { requests });
    if (method !== 'POST') return sendJson(response, 405, { message: 'use POST' });
    let body: unknown;
    try {
      body = JSON.parse(text) as unknown;
    } catch {
      return sendJson(response, 400, { message: 'body is not valid JSON' });
    }
    if (path === '/__standin/threats') {
      if (!Array.isArray(body)) return sendJson(response, 400, { message: 'send an array of threats' });
      addThreats(body as StandinThreat[]);
      return sendJson(response, 200, { threats: threatsById.size });
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

  const stats: StandinStats = {
    get requests() {
      return requests;
    },
    inFlight: (key) => (key === undefined ? totalInFlight : (inFlight.get(key) ?? 0)),
    maxInFlight: (key) => (key === undefined ? maxTotalInFlight : (maxInFlight.get(key) ?? 0)),
    earlyRequests: (key) => (key === undefined ? [...early.values()].reduce((sum, n) => sum + n, 0) : (early.get(key) ?? 0)),
    reset: () => {
      requests = [];
      maxInFlight.clear();
      maxTotalInFlight = totalInFlight;
      early.clear();
    },
  };

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;

  return {
    url: `http://${address.address}:${address.port}`,
    faults,
    stats,
    addThreats,
    removeThreats: (ids) => {
      for (const id of ids) {
        const threat = threatsById.get(id);
        if (!threat) continue;
        unindex(threat);
        threatsById.delete(id);
      }
      version += 1;
    },
    updateThreat: (id, patch) => {
      const threat = threatsById.get(id);
      if (!threat) throw new Error(`no threat ${id}`);
      addThreats([{ ...threat, ...patch }]);
    },
    threatsVisibleTo: (key) => {
      const organizations = new Set(visibleOrganizations(key) ?? []);
      return [...threatsById.values()].filter((threat) => organizations.has(threat.organization)).sort((a, b) => a.id - b.id);
    },
    setLatency: (ms) => {
      latencyMs = ms;
    },
    reportsOf: (organization) => reports.filter((report) => report.organization === organization),
    updateReport: (id, change) => {
      const report = reports.find((candidate) => candidate.id === id);
      if (!report) throw new Error(`no report ${id}`);
      change(report);
    },
    addReports: (added) => {
      reports.push(...added);
    },
    setReportsVariant: (variant) => {
      reportsVariant = variant;
    },
    setReportsEnabled: (enabled) => {
      reportsEnabled = enabled;
    },
    waitForRequests: (count) =>
      arrived >= count ? Promise.resolve() : new Promise<void>((resolve) => arrivalWaiters.push({ count, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of hanging) response.destroy();
        for (const socket of openSockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
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

function headerValue(value: string | string[] | undefined): string {
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function sendJson(response: ServerResponse, status: number, payload: unknown): void {
  sendText(response, status, JSON.stringify(payload));
}

function sendText(response: ServerResponse, status: number, json: string): void {
  if (response.destroyed) return;
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
  response.end(json);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
