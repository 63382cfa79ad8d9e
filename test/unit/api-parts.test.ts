import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../src/api/http.js';
import { RequestBudget } from '../../src/api/request-budget.js';
import { parseThreatPage } from '../../src/api/threat-client.js';
import { checkThreat } from '../../src/api/threat-record.js';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00.000Z');
  it('reads seconds and HTTP dates; zero, negative, past and junk fall back to the backoff floor', () => {
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter('0.5', now)).toBe(500);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:03 GMT', now)).toBe(3000);
    for (const value of ['0', '-1', 'Wed, 31 Dec 2025 23:59:00 GMT', 'soon', '', null]) expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});

describe('checkThreat', () => {
  it('accepts a valid record and any type string', () => {
    expect(checkThreat({ id: 7, content: 'https://x', type: 'PLATFORM_99', blockedAt: '2024-05-01T00:00:00.000Z', extra: 1 })).toEqual({
      ok: true,
      threat: { id: 7, content: 'https://x', type: 'PLATFORM_99', blockedAt: '2024-05-01T00:00:00.000Z' },
    });
  });

  it('gives a reason for each kind of bad record', () => {
    const cases: Array<[unknown, RegExp]> = [
      [null, /not a JSON object/],
      [{ id: 'abc', content: 'x', type: 'URL', blockedAt: '2024-05-01T00:00:00Z' }, /^id must be a positive integer, got "abc"/],
      [{ id: -5, content: 'x', type: 'URL', blockedAt: '2024-05-01T00:00:00Z' }, /^id must be a positive integer/],
      [{ id: 1.5, content: 'x', type: 'URL', blockedAt: '2024-05-01T00:00:00Z' }, /^id must be a positive integer/],
      [{ id: 1, type: 'URL', blockedAt: '2024-05-01T00:00:00Z' }, /^content must be a string, got nothing/],
      [{ id: 1, content: 5, type: 'URL', blockedAt: '2024-05-01T00:00:00Z' }, /^content must be a string/],
      [{ id: 1, content: 'x', type: '', blockedAt: '2024-05-01T00:00:00Z' }, /^type must be 1 to 64 printable ASCII characters/],
      [{ id: 1, content: 'x', type: 'URL', blockedAt: 'yesterday' }, /^blockedAt must be an ISO 8601 timestamp/],
      [{ id: 1, content: 'x', type: 'URL', blockedAt: '2024-02-30T00:00:00Z' }, /^blockedAt/],
      // Issue 32 item 4: a type is a short token, not 60 KB nor a line break that fakes output.
      [{ id: 1, content: 'x', type: 'T'.repeat(65), blockedAt: '2024-05-01T00:00:00Z' }, /^type must be 1 to 64 printable ASCII characters/],
      [{ id: 1, content: 'x', type: 'URL\nsynced OK', blockedAt: '2024-05-01T00:00:00Z' }, /^type must be 1 to 64 printable ASCII characters/],
      [{ id: 1, content: 'x', type: 'URL', blockedAt: '10000-01-01T00:00:00Z' }, /^blockedAt must be an ISO 8601 timestamp/],
      [{ id: 1, content: 'x', type: 'URL', blockedAt: '0000-12-31T23:00:00Z' }, /^blockedAt falls outside the years 0001-9999/],
    ];
    for (const [raw, reason] of cases) {
      const check = checkThreat(raw);
      expect(check.ok).toBe(false);
      if (!check.ok) expect(check.reason).toMatch(reason);
    }
  });

  it('splits a page into valid and rejected records and reads the cursor', () => {
    const parse = (text: string) => parseThreatPage(JSON.parse(text) as unknown, 'org', text);
    const page = parse('{"threats": [{"id": 1, "content": "a", "type": "URL", "blockedAt": "2024-05-01T00:00:00.000Z"}, { "id" : "x" }], "next_page": "2"}');
    expect(page.threats.map((t) => t.id)).toEqual([1]);
    expect(page.rejected).toEqual([{ raw: '{ "id" : "x" }', reason: 'id must be a positive integer, got "x"' }]);
    expect(page.nextPage).toBe('2');
    expect(() => parse('{"data": []}')).toThrow(/no "threats" array/);
    expect(() => parse('{"threats": [], "next_page": {}}')).toThrow(/next_page/);
  });
});

describe('RequestBudget', () => {
  it('keeps in-flight requests at the limit and halves it on a rate limit, growing back additively', async () => {
    const budget = new RequestBudget({ concurrency: 4 });
    const releases = await Promise.all([budget.acquire(), budget.acquire(), budget.acquire(), budget.acquire()]);
    let fifthStarted = false;
    const fifth = budget.acquire().then((release) => {
      fifthStarted = true;
      return release;
    });
    await Promise.resolve();
    expect(budget.inFlight).toBe(4);
    expect(fifthStarted).toBe(false);
    releases[0]?.();
    (await fifth)();
    expect(fifthStarted).toBe(true);
    for (const release of releases) release();
    budget.onRateLimited();
    expect(budget.limit).toBe(2);
    budget.onRateLimited();
    expect(budget.limit).toBe(1);
    budget.onSuccess();
    expect(budget.limit).toBe(2);
    budget.onSuccess();
    budget.onSuccess();
    expect(budget.limit).toBe(3);
  });

  it('starts nothing before a pause has passed', async () => {
    let now = 1_000;
    const budget = new RequestBudget({ concurrency: 2, now: () => now });
    budget.pause(50);
    const started = budget.acquire();
    let done = false;
    void started.then(() => {
      done = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    expect(budget.pausedForMs()).toBe(50);
    now += 50;
    (await started)();
    expect(done).toBe(true);
  });

  it('lets a waiting request go when its signal aborts', async () => {
    const budget = new RequestBudget({ concurrency: 1 });
    const held = await budget.acquire();
    const controller = new AbortController();
    const waiting = budget.acquire(controller.signal);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    held();
    expect(budget.inFlight).toBe(0);
  });
});
