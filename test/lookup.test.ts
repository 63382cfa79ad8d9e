// Issue 17: Safe Browsing-grade URL matching, one lookup for every kind, and GET/POST /v1/lookup.
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats, type Standin, type StandinThreat } from '../src/standin/index.js';
import { runCli, servingPort, startCli } from './support/cli.js';
import { createFileBeforeMigration } from './support/older-schema.js';
import { withDb } from './support/mirror-db.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEY = 'acme-key';

const start = (threats: StandinThreat[]): Promise<Standin> => serveThreats(KEY, NOW, threats);
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: '10', THREAT_MIRROR_LOOKBACK_DAYS: '2' });

const threat = (id: number, content: string, type: string, day = TODAY): StandinThreat => ({ id, content, type, blockedAt: `${day}T10:00:00.000Z`, organization: 'acme' });

interface Match {
  id: number;
  content: string;
  type: string;
  organizations: string[];
  match: { by: string; expression?: string };
}
interface Result {
  value: string;
  blocked: boolean;
  matches: Match[];
  matches_truncated?: true;
  same_host?: Array<{ id: number }>;
}
interface LookupDocument {
  results: Result[];
  mirror: { complete_through: string | null; history_from: string | null; stale: boolean; organizations: unknown[] };
}

async function cliLookup(dbPath: string, values: string[]): Promise<{ code: number | null; document: LookupDocument }> {
  // On the writer's clock, as the sync ran: the mirror is fresh, and a "not blocked" vouched for (exit 1).
  const result = await runCli(['lookup', '--json', ...values], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW });
  return { code: result.code, document: JSON.parse(result.stdout) as LookupDocument };
}

async function synced(threats: StandinThreat[]): Promise<{ service: Standin; dbPath: string }> {
  const service = await start(threats);
  const dbPath = tempDbPath();
  expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
  return { service, dbPath };
}

describe('URL matching by Safe Browsing expressions', () => {
  it('a path block covers that path and below only; a host block covers subdomains and every path; variants match', async () => {
    const { dbPath } = await synced([
      threat(1, 'https://shared-host.example/forms/abc', 'URL'),
      threat(2, 'https://evil.example/', 'URL'),
      threat(3, 'http://Blocked.Example/a/b', 'PAGE'),
      threat(4, 'https://shared-host.example/forms/other?id=7', 'URL'),
    ]);
    // One run of the command answers every value below (the CLI takes many); exit codes are checked apart.
    const values = [
      'https://shared-host.example/forms/abc/step2?x=1',
      'https://shared-host.example/forms/abcdef',
      'https://shared-host.example/',
      'https://shared-host.example/forms/',
      'shared-host.example',
      'https://shared-host.example/forms/other?id=7',
      'https://shared-host.example/forms/other?id=8',
      'http://deep.sub.evil.example/any/path?q=1',
      'evil.example',
      'EVIL.example/x',
      'https://evil.example./#frag',
      'https://notevil.example/',
      'https://evil.example.org/',
      'HTTP://blocked.example:80/a/./b/../b#top',
      'http://blocked.example./a/b',
      'http://%62locked.example/%61/b',
      'https://BLOCKED.example//a/b/',
      'http://Blocked.Example/a/b',
    ];
    const { document } = await cliLookup(dbPath, values);
    const answers = new Map(document.results.map((result) => [result.value, result]));
    const ask = (value: string) => {
      const result = answers.get(value) as Result;
      const code = result.blocked ? 0 : 1;
      return { code, blocked: result.blocked, ids: result.matches.map((match) => match.id), matches: result.matches, sameHost: (result.same_host ?? []).map((other) => other.id) };
    };
    // The exit code: 0 only when a value is blocked; a same-host threat alone never makes it 0.
    expect((await cliLookup(dbPath, ['https://shared-host.example/forms/abcdef'])).code).toBe(1);
    expect((await cliLookup(dbPath, ['https://shared-host.example/forms/abcdef', 'evil.example'])).code).toBe(0);

    const below = await ask('https://shared-host.example/forms/abc/step2?x=1');
    expect(below).toMatchObject({ code: 0, ids: [1], sameHost: [4] });
    expect(below.matches[0]?.match).toEqual({ by: 'expression', expression: 'shared-host.example/forms/abc' });
    for (const other of ['https://shared-host.example/forms/abcdef', 'https://shared-host.example/', 'https://shared-host.example/forms/', 'shared-host.example']) {
      const answer = await ask(other);
      expect(answer, other).toMatchObject({ code: 1, blocked: false, ids: [] });
      expect(answer.sameHost.sort(), other).toEqual([1, 4]);
    }
    expect(await ask('https://shared-host.example/forms/other?id=7')).toMatchObject({ code: 0, ids: [4] });
    expect(await ask('https://shared-host.example/forms/other?id=8')).toMatchObject({ code: 1, ids: [] });

    for (const covered of ['http://deep.sub.evil.example/any/path?q=1', 'evil.example', 'EVIL.example/x', 'https://evil.example./#frag']) {
      const answer = await ask(covered);
      expect(answer, covered).toMatchObject({ code: 0, ids: [2] });
      expect(answer.matches[0]?.match, covered).toEqual({ by: 'expression', expression: 'evil.example/' });
    }
    expect(await ask('https://notevil.example/')).toMatchObject({ code: 1, ids: [] });
    expect(await ask('https://evil.example.org/')).toMatchObject({ code: 1, ids: [] });

    for (const variant of ['HTTP://blocked.example:80/a/./b/../b#top', 'http://blocked.example./a/b', 'http://%62locked.example/%61/b', 'https://BLOCKED.example//a/b/']) {
      expect(await ask(variant), variant).toMatchObject({ code: 0, ids: [3] });
    }
    // The exact content matches as "exact" first.
    expect((await ask('http://Blocked.Example/a/b')).matches[0]?.match).toEqual({ by: 'exact' });
  });

  it('gives URL rows of a file written before the column their expression at the next start', async () => {
    const service = await start([threat(1, 'https://Old.Example/Path/./x', 'URL'), threat(2, 'boss@corp.example', 'EMAIL')]);
    const dbPath = tempDbPath();
    // A file at the previous schema (every migration before this one), with rows already in the feed.
    createFileBeforeMigration(dbPath, '_url_expression', (old) =>
      old.exec(`INSERT INTO threats (id, content, type, blocked_at, first_seen_at, updated_at, change_seq, host)
              VALUES (1, 'https://Old.Example/Path/./x', 'URL', '${TODAY}T10:00:00.000Z', 'x', 'x', 7, 'old.example'),
                     (2, 'boss@corp.example', 'EMAIL', '${TODAY}T10:00:00.000Z', 'x', 'x', 8, NULL);
              INSERT INTO organization_threats (organization, threat_id, first_seen_at) VALUES ('acme', 1, 'x'), ('acme', 2, 'x');`),
    );

    const result = await runCli(['--once'], env(service, dbPath));
    expect(result.code).toBe(0);
    expect(result.logs.find((line) => String(line.msg).startsWith('derived lookup columns'))?.threats).toBe(1);
    const rows = withDb(dbPath, (db) => db.prepare('SELECT id, url_expression, change_seq FROM threats ORDER BY id').all()) as Array<{ id: number; url_expression: string | null; change_seq: number }>;
    expect(rows[0]).toMatchObject({ id: 1, url_expression: 'old.example/Path/x' });
    expect(rows[0]?.change_seq).toBeGreaterThan(8);
    expect((await cliLookup(dbPath, ['http://old.example/Path/x'])).code).toBe(0);
    // The file holds no record of the lookup rules its rows follow: every row is derived again
    // (url/lookup-rules.ts), and the e-mail row, whose columns that schema's writer left empty,
    // gets them and moves in the feed.
    expect(result.logs.find((line) => String(line.msg).startsWith('derived the lookup columns again'))).toMatchObject({ threats: 2, changed: 1 });
    expect(rows[1]).toMatchObject({ id: 2, url_expression: null });
    expect(rows[1]?.change_seq).toBeGreaterThan(rows[0]?.change_seq as number);
    expect((await cliLookup(dbPath, ['boss@corp.example'])).code).toBe(0);
  });
});

describe('GET and POST /v1/lookup', () => {
  async function daemonPort(service: Standin, dbPath: string): Promise<number> {
    // A schedule that never comes round during the test: the file stays as the first sync left it.
    const daemon = startCli([], env(service, dbPath, { THREAT_MIRROR_HTTP_PORT: '0', THREAT_MIRROR_SCHEDULE: '0 0 1 1 *' }));
    const port = await servingPort(daemon);
    await daemon.waitForLog((log) => typeof log.msg === 'string' && log.msg.startsWith('sync of organization') && log.status === 'succeeded');
    return port;
  }

  it('answers the documented JSON, enforces its limits, and refuses bad input with a JSON 400', async () => {
    const { service, dbPath } = await synced([threat(1, 'https://evil.example/', 'URL'), threat(2, 'eip155:1:0xAbCdEf0123456789abcdef0123456789ABCDEF01', 'ADDRESS')]);
    const port = await daemonPort(service, dbPath);
    const base = `http://127.0.0.1:${port}/v1/lookup`;

    const get = await fetch(`${base}?value=${encodeURIComponent('https://a.evil.example/x')}&value=innocent.example`);
    expect(get.status).toBe(200);
    expect(get.headers.get('content-type')).toBe('application/json');
    const body = (await get.json()) as LookupDocument;
    expect(Object.keys(body).sort()).toEqual(['mirror', 'results']);
    expect(body.mirror).toEqual({
      complete_through: addDays(TODAY, -1),
      history_from: addDays(TODAY, -9),
      stale: false,
      organizations: [
        { organization: 'acme', state: 'fresh', complete_through: addDays(TODAY, -1), history_from: addDays(TODAY, -9), last_success_at: expect.stringMatching(new RegExp(`^${TODAY}T`)), problems: [] },
      ],
    });
    expect(body.results).toEqual([
      {
        value: 'https://a.evil.example/x',
        blocked: true,
        matches: [{ id: 1, content: 'https://evil.example/', type: 'URL', organizations: ['acme'], match: { by: 'expression', expression: 'evil.example/' } }],
        verdict: 'blocked',
        reason: 'threat #1 (URL) matches it for acme',
      },
      { value: 'innocent.example', blocked: false, matches: [], verdict: 'not_blocked', reason: 'no threat in force matches it: acme is synced and fresh' },
    ]);

    const post = async (payload: unknown, raw?: string) =>
      fetch(base, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw ?? JSON.stringify(payload) });
    const posted = await post({ values: ['0xABCDEF0123456789ABCDEF0123456789ABCDEF01'] });
    expect(posted.status).toBe(200);
    expect(((await posted.json()) as LookupDocument).results[0]?.matches).toMatchObject([{ id: 2, match: { by: 'address' } }]);

    const thousand = Array.from({ length: 1000 }, (_, index) => `https://host-${index}.evil.example/p`);
    const full = await post({ values: thousand });
    expect(full.status).toBe(200);
    const fullBody = (await full.json()) as LookupDocument;
    expect(fullBody.results).toHaveLength(1000);
    expect(fullBody.results.every((result) => result.blocked)).toBe(true);

    const refusals: Array<[Promise<Response>, RegExp]> = [
      [post({ values: [...thousand, 'one more'] }), /at most 1000 values/],
      [post({ values: [] }), /at least one value/],
      [post({ values: 'https://evil.example/' }), /must be an array/],
      [post({ values: ['ok', 42] }), /value 2 must be a non-empty string/],
      [post({ values: ['   '] }), /value 1 must be a non-empty string/],
      [post({ nothing: [] }), /"values"/],
      [post(undefined, '{"values": ['), /body must be JSON/],
      [fetch(base), /at least one value/],
      [fetch(`${base}?url=x`), /unknown query parameter "url"/],
      [fetch(`${base}?${'value=a&'.repeat(1000)}value=b`), /at most 1000 values/],
    ];
    for (const [pending, message] of refusals) {
      const response = await pending;
      expect(response.status, String(message)).toBe(400);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(((await response.json()) as { error: string }).error).toMatch(message);
    }
    // Over and over: a 413 sent while the client still wrote its body once broke the pipe (EPIPE)
    // in about 1 of 40 requests.
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const huge = await post({ values: ['x'.repeat(5 * 1024 * 1024)] });
      expect(huge.status).toBe(413);
      expect(((await huge.json()) as { error: string }).error).toMatch(/request body over/);
    }
    expect((await fetch(base, { method: 'DELETE' })).status).toBe(405);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });

  it('lists at most 100 matches a value and ~2M characters an answer, so 1,000 values of a URL reported 300 times cannot exhaust the thread', async () => {
    // Each match lists ~8,000 characters (its content and the expression it matched by). Listing all
    // of them for 1,000 values is ~2.4 GB; the HTTP thread's heap is 32 MB: the daemon used to exit.
    const content = `https://reported-again.example/${'a'.repeat(3_900)}`;
    const { service, dbPath } = await synced(Array.from({ length: 300 }, (_, index) => threat(index + 1, content, 'URL')));
    const daemon = startCli([], env(service, dbPath, { THREAT_MIRROR_HTTP_PORT: '0', THREAT_MIRROR_SCHEDULE: '0 0 1 1 *' }));
    const port = await servingPort(daemon);
    await daemon.waitForLog((log) => typeof log.msg === 'string' && log.msg.startsWith('sync of organization') && log.status === 'succeeded');

    const response = await fetch(`http://127.0.0.1:${port}/v1/lookup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ values: Array.from({ length: 1000 }, () => content) }),
    });
    expect(response.status).toBe(200);
    const { results } = (await response.json()) as LookupDocument;
    expect(results).toHaveLength(1000);
    // `blocked` stays exact for every value; what is listed is bounded.
    expect(results.every((result) => result.blocked && result.matches_truncated === true)).toBe(true);
    expect(results[0]?.matches.map((match) => match.id)).toEqual(Array.from({ length: 100 }, (_, index) => index + 1));
    expect(results[0]?.matches[0]?.match).toEqual({ by: 'exact' });
    const listed = results.reduce((sum, result) => sum + result.matches.reduce((chars, match) => chars + match.content.length, 0), 0);
    expect(listed).toBeGreaterThan(0);
    expect(listed).toBeLessThanOrEqual(2_000_000);
    expect(results.at(-1)?.matches).toEqual([]);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect(daemon.running).toBe(true);

    // The command lists the same and says that there are more.
    const { code, document } = await cliLookup(dbPath, [content]);
    expect(code).toBe(0);
    expect(document.results[0]).toMatchObject({ blocked: true, matches_truncated: true });
    expect(document.results[0]?.matches).toHaveLength(100);
    const text = await runCli(['lookup', content], { THREAT_MIRROR_DB: dbPath });
    expect(text.stdout).toContain(': blocked (100 matches listed; the mirror holds more)');
  });

  it('agrees with the lookup command on a few hundred generated values', async () => {
    const generated = generateThreats({ seed: 17, organizations: ['acme'], count: 300, fromDay: addDays(TODAY, -9), toDay: TODAY });
    const hostBlocks = [threat(9_000_001, 'https://whole-host.example/', 'URL'), threat(9_000_002, 'https://sites.example-host.com/acme/', 'PAGE')];
    const { service, dbPath } = await synced([...generated, ...hostBlocks]);
    const port = await daemonPort(service, dbPath);
    const values: string[] = [];
    for (const [index, item] of generated.entries()) {
      if (index % 2 === 0) values.push(item.content);
      if (item.type === 'EMAIL') values.push(item.content.toUpperCase());
      if (item.type === 'ADDRESS' && item.content.startsWith('eip155:')) values.push(item.content.split(':')[2]?.toUpperCase().replace('0X', '0x') ?? '');
      if (!item.content.startsWith('https://')) continue;
      const url = new URL(item.content);
      if (index % 3 === 0) values.push(`${url.protocol}//${url.host.toUpperCase()}${url.pathname}/./${url.search}#frag`);
      if (index % 5 === 0) values.push(`https://${url.host}/another-page`);
      if (index % 7 === 0) values.push(url.host);
    }
    values.push('https://sub.whole-host.example/a/b?c', 'whole-host.example', 'https://sites.example-host.com/acme/x.html', 'plain words', 'x');
    // The CLI takes values as arguments, and an argument cannot hold a NUL (a hostile generated content).
    const withoutNul = values.filter((value) => !value.includes('\u0000'));
    values.splice(0, values.length, ...withoutNul);
    expect(values.length).toBeGreaterThan(250);

    const response = await fetch(`http://127.0.0.1:${port}/v1/lookup`, { method: 'POST', body: JSON.stringify({ values }) });
    expect(response.status).toBe(200);
    const served = (await response.json()) as LookupDocument;
    const { document: cli } = await cliLookup(dbPath, values);
    const withoutContext = cli.results.map(({ same_host: _context, ...result }) => result);
    expect(served.results).toEqual(withoutContext);
    expect(served.mirror).toEqual(cli.mirror);
    const blocked = served.results.filter((result) => result.blocked).length;
    expect(blocked).toBeGreaterThan(100);
    expect(blocked).toBeLessThan(values.length);
    const kinds = new Set(served.results.flatMap((result) => result.matches.map((match) => match.match.by)));
    expect(kinds).toEqual(new Set(['exact', 'expression', 'address', 'email']));
  });
});
