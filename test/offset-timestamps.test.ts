// blockedAt as the interface says it is (UTC, millisecond precision) whatever form the service
// writes it in: issue 27 item 3 (an offset filed a threat under the wrong day, and a later walk of
// that day marked it removed) and issue 32 item 8 (instants outside 0001-9999 reached the STIX
// export as "+010000-…"). The built CLI against a stand-in that serves offsets and filters by
// instant, as a real backend does.
import { describe, expect, it } from 'vitest';
import type { StandinThreat } from '../src/standin/index.js';
import { runCli } from './support/cli.js';
import { scalar, withDb } from './support/mirror-db.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath } from './support/temp.js';

const KEY = 'offset-key-3f90';
const NOW = '2026-11-21T12:00:00.000Z';
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '0' });

const threat = (id: number, content: string, blockedAt: string): StandinThreat => ({ id, content, type: 'URL', blockedAt, organization: 'acme' });

/** The live threat of the issue: blocked 2026-11-20 20:00 UTC, which is 2026-11-21 01:00 at +05:00. */
const LIVE = threat(1, 'https://live-offset.example/', '2026-11-20T20:00:00.000Z');
const OTHERS = [threat(2, 'https://today.example/', '2026-11-21T09:00:00.000Z'), threat(3, 'https://yesterday.example/', '2026-11-20T08:00:00.000Z')];

describe('a blockedAt with a UTC offset is read as its UTC instant (issue 27 item 3)', () => {
  it('a threat served as 2026-11-21T01:00:00+05:00 is filed under 2026-11-20 and never marked removed by a walk of 2026-11-21', async () => {
    const service = await serveThreats(KEY, NOW, [LIVE, ...OTHERS], { blockedAtOffset: '+05:00' });
    const dbPath = tempDbPath();
    const first = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_INITIAL_DAYS: '2' }));
    expect(first.code, first.stderr).toBe(0);
    // The stand-in wrote it with the offset; the mirror stores the instant in the interface's form.
    const served = service.stats.requests.length;
    expect(served).toBeGreaterThan(0);

    // An incremental run that walks 2026-11-21 alone: the service (filtering by instant) does not return threat 1.
    // (The same 2 days: a longer THREAT_MIRROR_INITIAL_DAYS would now walk the days before them too.)
    const second = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_INITIAL_DAYS: '2', THREAT_MIRROR_LOOKBACK_DAYS: '0' }));
    expect(second.code, second.stderr).toBe(0);
    const walked = service.stats.requests.slice(served).map((request) => request.body as { startDate: string; endDate: string });
    expect(walked.every((body) => body.startDate === '2026-11-21' && body.endDate === '2026-11-21')).toBe(true);
    expect(scalar(dbPath, "SELECT removed_at FROM organization_threats WHERE threat_id = 1 AND organization = 'acme'")).toBeNull();
    expect(scalar(dbPath, 'SELECT blocked_at FROM threats WHERE id = 1')).toBe('2026-11-20T20:00:00.000Z');

    const lookup = await runCli(['lookup', 'https://live-offset.example/login'], { THREAT_MIRROR_DB: dbPath });
    expect(lookup.code, lookup.stdout).toBe(0);
    expect(lookup.stdout).toContain('blocked');
  });

  it('the stand-in serves offsets and filters by instant, as a backend would', async () => {
    const service = await serveThreats(KEY, NOW, [LIVE, ...OTHERS], { blockedAtOffset: '+05:00' });
    const response = await fetch(`${service.url}/threats/list`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ startDate: '2026-11-21', endDate: '2026-11-21', per_page: 100 }),
    });
    const body = (await response.json()) as { threats: Array<{ id: number; blockedAt: string }> };
    expect(body.threats).toEqual([{ id: 2, content: 'https://today.example/', type: 'URL', blockedAt: '2026-11-21T14:00:00.000+05:00' }]);
  });
});

describe('a blockedAt whose UTC instant is outside 0001-9999 is kept aside (issue 32 item 8)', () => {
  it('is rejected with the reason, and the STIX export stays RFC 3339', async () => {
    const service = await serveThreats(KEY, NOW, [LIVE, ...OTHERS]);
    const dbPath = tempDbPath();
    const far = ['9999-12-31T23:59:59-23:59', '0001-01-01T00:30:00+01:00'];
    service.faults.enqueue({
      kind: 'rawRecords',
      records: far.map((blockedAt, index) => JSON.stringify({ id: 900 + index, content: `https://far-${index}.example/`, type: 'URL', blockedAt })),
    });
    const result = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_INITIAL_DAYS: '2', THREAT_MIRROR_CONCURRENCY: '1' }));
    expect(result.code, result.stderr).toBe(0);
    const rejected = withDb(dbPath, (db) => db.prepare('SELECT raw, reason FROM rejected_records ORDER BY id').all() as Array<{ raw: string; reason: string }>);
    expect(rejected.map((row) => row.reason)).toEqual(far.map((blockedAt) => `blockedAt falls outside the years 0001-9999 once in UTC (RFC 3339 and STIX cannot carry it), got "${blockedAt}"`));
    expect(scalar(dbPath, 'SELECT count(*) FROM threats WHERE id >= 900')).toBe(0);

    const stix = await runCli(['export', '--format', 'stix'], { THREAT_MIRROR_DB: dbPath });
    expect(stix.code).toBe(0);
    const bundle = JSON.parse(stix.stdout) as { objects: Array<{ valid_from: string; created: string; modified: string }> };
    expect(bundle.objects).toHaveLength(3);
    for (const object of bundle.objects) {
      for (const stamp of [object.valid_from, object.created, object.modified]) expect(stamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    }
  });
});
