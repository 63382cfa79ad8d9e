// The stand-in against the interface document: keys, filters, defaults, sorting, bounds, cursors.
import { afterEach, describe, expect, it } from 'vitest';
import { type Standin, type StandinThreat, startStandin } from '../src/standin/index.js';

let standin: Standin | undefined;
afterEach(async () => {
  await standin?.close();
  standin = undefined;
});

const t = (id: number, organization: string, blockedAt: string, content = `https://t${id}.example`, type = 'URL'): StandinThreat => ({ id, content, type, blockedAt, organization });

const THREATS = [
  t(1, 'acme', '2026-03-13T23:59:59.999Z'),
  t(2, 'acme', '2026-03-14T00:00:00.000Z', 'eip155:1:0xabc', 'ADDRESS'),
  t(3, 'globex', '2026-03-14T12:00:00.000Z'),
  t(4, 'acme', '2026-03-15T00:00:00.000Z', 'Wallet-Drainer.example', 'PAGE'),
  t(5, 'initech', '2026-03-15T08:00:00.000Z'),
  t(6, 'acme', '2026-03-15T23:59:59.999Z', 'phisher@example.com', 'EMAIL'),
];

async function start(now = '2026-03-15T12:00:00.000Z', threats = THREATS): Promise<Standin> {
  standin = await startStandin({
    threats,
    keys: {
      organizationKeys: { 'acme-key': 'acme', 'globex-key': 'globex' },
      userKeys: {
        'user-key': [
          { organization: 'acme', active: true },
          { organization: 'globex', active: true },
          { organization: 'initech', active: false },
        ],
        'inactive-user': [{ organization: 'acme', active: false }],
      },
    },
    now: () => new Date(now),
  });
  return standin;
}

async function list(service: Standin, key: string | undefined, body: unknown): Promise<{ status: number; json: { threats?: Array<{ id: number }>; next_page?: string | null; message?: string } }> {
  const response = await fetch(`${service.url}/threats/list`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'x-api-key': key }) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as never };
}

const ids = (json: { threats?: Array<{ id: number }> }) => json.threats?.map((threat) => threat.id);
const ALL = { startDate: '2026-01-01', endDate: '2026-12-31', per_page: 100 };

describe('the stand-in of POST /threats/list', () => {
  it('lets an organization key see its own threats and a user key those of organizations it is active in', async () => {
    const service = await start();
    expect(ids((await list(service, 'acme-key', ALL)).json)).toEqual([1, 2, 4, 6]);
    expect(ids((await list(service, 'globex-key', ALL)).json)).toEqual([3]);
    expect(ids((await list(service, 'user-key', ALL)).json)).toEqual([1, 2, 3, 4, 6]);
    for (const key of ['inactive-user', 'nobody', undefined]) {
      const denied = await list(service, key, ALL);
      expect(denied.status).toBe(401);
      expect(denied.json.message).toMatch(/valid API key is required/);
    }
  });

  it('filters by inclusive UTC days, and by default covers the day before the request and the day of it', async () => {
    const service = await start();
    expect(ids((await list(service, 'acme-key', { startDate: '2026-03-14', endDate: '2026-03-14' })).json)).toEqual([2]);
    expect(ids((await list(service, 'acme-key', { startDate: '2026-03-13', endDate: '2026-03-15', per_page: 100 })).json)).toEqual([1, 2, 4, 6]);
    expect(ids((await list(service, 'acme-key', {})).json)).toEqual([2, 4, 6]);
    await service.close();
    // At the last millisecond of a day and the first of the next, "today" follows the injected clock.
    for (const [now, expected] of [['2026-03-15T23:59:59.999Z', [2, 4, 6]], ['2026-03-16T00:00:00.000Z', [4, 6]]] as const) {
      const late = await start(now);
      expect(ids((await list(late, 'acme-key', {})).json)).toEqual(expected);
      await late.close();
    }
    standin = undefined;
  });

  it('filters by asset type and by text, and sorts by each key in either direction', async () => {
    const service = await start();
    expect(ids((await list(service, 'acme-key', { ...ALL, assetType: ['ADDRESS', 'EMAIL'] })).json)).toEqual([2, 6]);
    expect(ids((await list(service, 'acme-key', { ...ALL, query: 'wallet' })).json)).toEqual([4]);
    // Both filters at once; a well-formed type outside the documented list is no 400 (the service adds platforms).
    expect(ids((await list(service, 'acme-key', { ...ALL, assetType: ['PAGE'], query: 'wallet' })).json)).toEqual([4]);
    expect(ids((await list(service, 'acme-key', { ...ALL, assetType: ['ADDRESS'], query: 'wallet' })).json)).toEqual([]);
    expect(ids((await list(service, 'acme-key', { ...ALL, assetType: ['PLATFORM_99'] })).json)).toEqual([]);
    expect(ids((await list(service, 'acme-key', { ...ALL, sorting: [{ key: 'id', direction: 'desc' }] })).json)).toEqual([6, 4, 2, 1]);
    expect(ids((await list(service, 'acme-key', { ...ALL, sorting: [{ key: 'blockedAt', direction: 'desc' }] })).json)).toEqual([6, 4, 2, 1]);
    expect(ids((await list(service, 'acme-key', { ...ALL, sorting: [{ key: 'content', direction: 'asc' }] })).json)).toEqual([4, 2, 1, 6]);
    expect(ids((await list(service, 'acme-key', { ...ALL, sorting: [{ key: 'type', direction: 'asc' }, { key: 'id', direction: 'desc' }] })).json)).toEqual([2, 6, 4, 1]);
  });

  it('pages with cursors: 10 by default, at most 100, no empty trailing page on an exact multiple', async () => {
    const many = Array.from({ length: 200 }, (_, index) => t(index + 1, 'acme', '2026-03-15T01:00:00.000Z'));
    const service = await start(undefined, many);
    const first = await list(service, 'acme-key', { startDate: '2026-03-15', endDate: '2026-03-15' });
    expect(first.json.threats).toHaveLength(10);
    expect(first.json.next_page).toBe('2');
    const seen: number[] = [];
    let cursor: string | null | undefined = null;
    let requests = 0;
    do {
      const page = await list(service, 'acme-key', { startDate: '2026-03-15', endDate: '2026-03-15', per_page: 100, ...(cursor ? { next_page: cursor } : {}) });
      requests += 1;
      seen.push(...(ids(page.json) ?? []));
      cursor = page.json.next_page;
    } while (cursor);
    expect(requests).toBe(2);
    expect(seen).toEqual(many.map((threat) => threat.id));
    expect((await list(service, 'acme-key', { startDate: '2026-03-15', endDate: '2026-03-15', per_page: 100, next_page: '9' })).json).toEqual({ threats: [], next_page: null });
  });

  it('answers 400 for parameters outside the document', async () => {
    const service = await start();
    for (const body of [
      { per_page: 0 },
      { per_page: 101 },
      { per_page: 1.5 },
      { next_page: '0' },
      { next_page: 2 },
      { startDate: '2024-13-01' },
      { endDate: '15/03/2026' },
      { assetType: ['planet'] },
      { assetType: ['URL,PAGE'] },
      { assetType: 'URL' },
      { sorting: [{ key: 'score', direction: 'asc' }] },
      { sorting: [{ key: 'id', direction: 'up' }] },
      'not json',
    ]) {
      const refused = await list(service, 'acme-key', body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.json.message).toBeTruthy();
    }
  });

  it('injects faults, counts requests in flight per key, and closes with a request hanging', async () => {
    const service = await start();
    service.faults.enqueue({ kind: 'status', status: 503 }, { times: 1 });
    expect((await list(service, 'acme-key', ALL)).status).toBe(503);
    expect((await list(service, 'acme-key', ALL)).status).toBe(200);
    service.faults.enqueue({ kind: 'truncate' });
    const truncated = await fetch(`${service.url}/threats/list`, { method: 'POST', headers: { 'x-api-key': 'acme-key' }, body: JSON.stringify(ALL) });
    await expect(truncated.json()).rejects.toThrow();
    service.setLatency(30);
    await Promise.all([list(service, 'acme-key', ALL), list(service, 'acme-key', ALL), list(service, 'acme-key', ALL)]);
    expect(service.stats.maxInFlight('acme-key')).toBe(3);
    expect(service.stats.inFlight('acme-key')).toBe(0);
    service.setLatency(0);
    service.faults.enqueue({ kind: 'hang' });
    const hanging = fetch(`${service.url}/threats/list`, { method: 'POST', headers: { 'x-api-key': 'acme-key' }, body: '{}' }).catch((error: unknown) => error);
    await service.waitForRequests(service.stats.requests.length + 1);
    await service.close();
    expect(await hanging).toBeInstanceOf(Error);
    standin = undefined;
  });
});

describe('the stand-in admin routes', () => {
  it('lists every request with its key, body, status and threat count at GET /__standin/requests', async () => {
    const service = await start();
    await list(service, 'acme-key', { ...ALL, per_page: 2 });
    await list(service, 'acme-key', { ...ALL, per_page: 2, next_page: '2' });
    await list(service, 'nobody', ALL);
    const response = await fetch(`${service.url}/__standin/requests`);
    const { requests } = (await response.json()) as { requests: Array<{ key: string; body: unknown; status: number; threats: number }> };
    expect(requests.map(({ key, body, status, threats }) => ({ key, body, status, threats }))).toEqual([
      { key: 'acme-key', body: { ...ALL, per_page: 2 }, status: 200, threats: 2 },
      { key: 'acme-key', body: { ...ALL, per_page: 2, next_page: '2' }, status: 200, threats: 2 },
      { key: 'nobody', body: ALL, status: 401, threats: 0 },
    ]);
  });
});
