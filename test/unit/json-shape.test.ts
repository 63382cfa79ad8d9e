// Issue 32 item 3: the pre-scan that bounds what JSON.parse may build from a response.
import { describe, expect, it } from 'vitest';
import { jsonShapeProblem } from '../../src/api/json-shape.js';
import { utcInstantOf } from '../../src/api/threat-record.js';

describe('jsonShapeProblem', () => {
  const limits = { maxDepth: 4, maxValues: 10 };

  it('passes a page within the limits, brackets and commas inside strings (escaped quotes included) not counted', () => {
    expect(jsonShapeProblem('{"threats":[{"id":1,"content":"a,[{\\\\\\"],{b"}],"next_page":null}', limits)).toBeUndefined();
    expect(jsonShapeProblem('not json at all [[[[[[', { maxDepth: 99, maxValues: 99 })).toBeUndefined();
  });

  it('refuses nesting deeper than the limit, and more values than the limit, before anything is parsed', () => {
    expect(jsonShapeProblem('{"threats":[{"id":[[1]]}]}', limits)).toBe('nests values more than 4 levels deep');
    expect(jsonShapeProblem(`{"threats":[${Array(10).fill(1).join(',')}]}`, limits)).toBe('holds more than 10 values');
    // The shapes of the issue, at the default limits: a million levels, 200,000 tiny records.
    expect(jsonShapeProblem(`{"threats":[{"id":${'['.repeat(1_000_000)}1${']'.repeat(1_000_000)}}]}`)).toBe('nests values more than 32 levels deep');
    expect(jsonShapeProblem(`{"threats":[${Array(200_000).fill(1).join(',')}]}`)).toBe('holds more than 100000 values');
  });
});

describe('utcInstantOf (issue 27 item 3)', () => {
  it('reads every ISO 8601 form the service may send as one UTC instant with milliseconds', () => {
    expect(utcInstantOf('2026-11-21T01:00:00+05:00')).toBe('2026-11-20T20:00:00.000Z');
    expect(utcInstantOf('2026-11-21T01:00:00.5+0500')).toBe('2026-11-20T20:00:00.500Z');
    expect(utcInstantOf('2026-11-20T20:00Z')).toBe('2026-11-20T20:00:00.000Z');
    expect(utcInstantOf('2026-11-20T23:59:59.999999-00:00')).toBe('2026-11-20T23:59:59.999Z');
    expect(utcInstantOf('2026-11-20T20:00:00.000Z')).toBe('2026-11-20T20:00:00.000Z');
    expect(utcInstantOf('2026-11-20 20:00:00Z')).toEqual({ problem: 'must be an ISO 8601 timestamp' });
  });
});

describe('a reports page of more reports than the limit asked for (issue 32 item 3)', () => {
  it('is a broken response, retried like a truncated body', async () => {
    const { parseReportPage } = await import('../../src/api/report-client.js');
    const text = `{"reports":[${Array(101).fill('{"id":1,"proposals":[]}').join(',')}]}`;
    expect(() => parseReportPage(JSON.parse(text) as unknown, 'org', text)).toThrow('org: response holds 101 reports, more than the limit of 100 asked for');
  });
});
