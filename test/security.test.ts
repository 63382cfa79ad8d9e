// Hostile networks and mistakes, as a user meets them: the compiled CLI against the stand-in (and a
// second server where a redirect points), into a real SQLite file. No secret may leave; no bad
// answer may poison a checkpoint.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, request as httpRequest, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats, type Standin, type StandinThreat } from '../src/standin/index.js';
import { type CliResult, runCli, servingPort, startCli } from './support/cli.js';
import { afterThisTest } from './support/cleanup.js';
import { mirroredThreats, runs, scalar, withDb, withWritableDb } from './support/mirror-db.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath, tempDir } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const FROM = addDays(TODAY, -7);
/** Planted: neither may appear in anything the program prints or stores. */
const KEY = 'sk-live-PLANTED-KEY-4e7a91c2';
const PASSWORD = 'PLANTED-PASSWORD-b83f';
const LEAKS = [KEY, PASSWORD, encodeURIComponent(KEY), encodeURIComponent(PASSWORD)];

function start(threats: StandinThreat[] = dataset()): Promise<Standin> {
  return serveThreats(KEY, NOW, threats);
}

function dataset(count = 900, seed = 31): StandinThreat[] {
  return generateThreats({ seed, organizations: ['acme'], count, fromDay: FROM, toDay: TODAY });
}

const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_RETRY_MIN_MS: '5', THREAT_MIRROR_RETRY_MAX_MS: '20', THREAT_MIRROR_MAX_RETRIES: '2', LOG_LEVEL: 'trace' });

const BACKFILL = ['--backfill', '--from', FROM];

function expected(service: Standin): Array<Pick<StandinThreat, 'id' | 'content' | 'type' | 'blockedAt'>> {
  return service.threatsVisibleTo(KEY).map(({ id, content, type, blockedAt }) => ({ id, content, type, blockedAt }));
}

/** A server at another origin that records what arrives there; closed after the test. */
interface RecordingServer {
  readonly url: string;
  readonly received: IncomingHttpHeaders[];
  close(): Promise<void>;
}

async function startRecordingServer(): Promise<RecordingServer> {
  const received: IncomingHttpHeaders[] = [];
  const server: Server = createServer((request, response) => {
    received.push(request.headers);
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"threats":[],"next_page":null}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  afterThisTest('servers', () => new Promise((resolve) => server.close(() => resolve(undefined))));
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Every text value of every table of the file, with where it was found. */
function allText(dbPath: string): string[] {
  return withDb(dbPath, (db) => {
    const found: string[] = [];
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
    for (const table of tables) {
      for (const row of db.prepare(`SELECT * FROM "${table}"`).all() as Array<Record<string, unknown>>) {
        for (const [column, value] of Object.entries(row)) if (typeof value === 'string') found.push(`${table}.${column}: ${value}`);
      }
    }
    return found;
  });
}

function expectNoLeak(where: string, text: string): void {
  for (const secret of LEAKS) expect(text.includes(secret), `${secret} in ${where}:\n${text.slice(0, 2000)}`).toBe(false);
}

describe('start-up refusals', () => {
  it('refuses credentials in THREAT_MIRROR_API_URL with exit 2, naming the variable, never the password', async () => {
    const service = await start();
    const dbPath = tempDbPath();
    const withCredentials = service.url.replace('http://', `http://user:${PASSWORD}@`);
    const result = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_API_URL: withCredentials }));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^threat-mirror: THREAT_MIRROR_API_URL: must not contain credentials/);
    expectNoLeak('output', result.stdout + result.stderr);
    expect(service.stats.requests).toHaveLength(0);
  });

  it('refuses plain http:// to a host that is not loopback unless allowed, then warns at each start', async () => {
    const service = await start();
    const dbPath = tempDbPath();
    // 0.0.0.0 reaches this machine's listeners, yet is not a loopback address.
    const url = service.url.replace('127.0.0.1', '0.0.0.0');
    const refused = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_API_URL: url }));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/THREAT_MIRROR_API_URL: plain http:\/\/ to 0\.0\.0\.0.*THREAT_MIRROR_ALLOW_INSECURE_HTTP=1/);
    for (let run = 0; run < 2; run += 1) {
      const allowed = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_API_URL: url, THREAT_MIRROR_ALLOW_INSECURE_HTTP: '1' }));
      expect(allowed.code).toBe(0);
      expect(allowed.logs.filter((line) => line.level === 40 && String(line.msg).includes('THREAT_MIRROR_ALLOW_INSECURE_HTTP=1'))).toHaveLength(1);
    }
  });
});

describe('redirects', () => {
  for (const status of [301, 302, 307, 308]) {
    it(`${status} to another origin fails at once, naming the status and origin, and the key never arrives there`, async () => {
      const service = await start();
      const other = await startRecordingServer();
      const dbPath = tempDbPath();
      service.faults.enqueue({ kind: 'redirect', status, location: `${other.url}/threats/list` }, { times: 100 });
      const result = await runCli(BACKFILL, env(service, dbPath, { THREAT_MIRROR_CONCURRENCY: '1', THREAT_MIRROR_MAX_RETRIES: '6' }));
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`organization "acme" failed: organization "acme": redirect ${status} to ${other.url}, another origin`);
      // Not retried: one window, one request, and nothing at the other origin.
      expect(service.stats.requests).toHaveLength(1);
      expect(runs(dbPath).at(-1)).toMatchObject({ status: 'failed', retries: 0 });
      expect(other.received).toHaveLength(0);
      expect(result.logs.some((line) => String(line.msg).includes('will retry'))).toBe(false);
    });
  }

  it('to the same origin fails too, naming the path to set instead', async () => {
    const service = await start();
    const dbPath = tempDbPath();
    service.faults.enqueue({ kind: 'redirect', status: 308, location: '/v2/threats/list' }, { times: 100 });
    const result = await runCli(BACKFILL, env(service, dbPath, { THREAT_MIRROR_CONCURRENCY: '1' }));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`redirect 308 to ${service.url}/v2/threats/list (same origin): redirects are not followed`);
    expect(service.stats.requests).toHaveLength(1);
  });
});

describe('https', () => {
  const TLS = join(import.meta.dirname, 'fixtures', 'tls');

  /** The stand-in behind TLS (a certificate for 127.0.0.1 that only NODE_EXTRA_CA_CERTS makes trusted), as the real service is. */
  async function behindTls(service: Standin): Promise<string> {
    const upstream = new URL(service.url);
    const server = createTlsServer({ key: readFileSync(join(TLS, 'key.pem')), cert: readFileSync(join(TLS, 'cert.pem')) }, (incoming, outgoing) => {
      const forwarded = httpRequest({ host: upstream.hostname, port: upstream.port, path: incoming.url, method: incoming.method, headers: incoming.headers }, (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      });
      incoming.pipe(forwarded);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    afterThisTest('servers', () => new Promise((resolve) => server.close(() => resolve(undefined))));
    return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('mirrors over TLS with the CA the user adds, and a certificate it cannot verify fails the organization, naming the TLS error', async () => {
    const service = await start();
    const url = await behindTls(service);
    const dbPath = tempDbPath();
    const trusted = await runCli(BACKFILL, env(service, dbPath, { THREAT_MIRROR_API_URL: url, NODE_EXTRA_CA_CERTS: join(TLS, 'cert.pem') }));
    expect(trusted.stderr).toBe('');
    expect(trusted.code).toBe(0);
    expect(mirroredThreats(dbPath, 'acme')).toEqual(expected(service));

    const before = service.stats.requests.length;
    const untrusted = await runCli(BACKFILL, env(service, tempDbPath(), { THREAT_MIRROR_API_URL: url }));
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toMatch(/organization "acme" failed: .*network error: self[- ]signed certificate/);
    // The key never left: no request got past the handshake.
    expect(service.stats.requests.length).toBe(before);
    for (const leak of LEAKS) expect(untrusted.stdout + untrusted.stderr).not.toContain(leak);
  });
});

describe('cursors', () => {
  const BAD_CURSORS: unknown[] = ['abc', '0', '-5', '', { page: 2 }];
  for (const value of BAD_CURSORS) {
    it(`next_page ${JSON.stringify(value)} is retried, then fails the organization quoting it; nothing of the page is committed; a clean run completes`, async () => {
      const service = await start();
      const dbPath = tempDbPath();
      // Every attempt at the first page (1 + 2 retries) carries the bad cursor.
      service.faults.enqueue({ kind: 'badCursor', value }, { times: 3 });
      const failed = await runCli(BACKFILL, env(service, dbPath, { THREAT_MIRROR_CONCURRENCY: '1' }));
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain(`response "next_page" must be a positive integer in string form (at most 20 digits) or null, got ${JSON.stringify(value)}`);
      const answered = service.stats.requests.filter((request) => request.fault === 'badCursor');
      expect(answered).toHaveLength(3);
      expect(answered[0]?.threats).toBeGreaterThan(0);
      expect(scalar(dbPath, 'SELECT count(*) FROM threats')).toBe(0);
      expect(scalar(dbPath, 'SELECT count(*) FROM sync_cursors WHERE next_page IS NOT NULL')).toBe(0);
      expect(runs(dbPath).at(-1)).toMatchObject({ status: 'failed' });
      expect(failed.logs.filter((line) => line.reason === 'bad_body' && String(line.msg).startsWith('request failed, will retry'))).toHaveLength(3);

      const clean = await runCli(BACKFILL, env(service, dbPath, { THREAT_MIRROR_CONCURRENCY: '1' }));
      expect(clean.code).toBe(0);
      expect(mirroredThreats(dbPath, 'acme')).toEqual(expected(service));
    });
  }

  /** A first run refused at once (401, not retried) leaves the first window open; it then gets a stored cursor. */
  async function windowWithStoredCursor(service: Standin, environment: Record<string, string>, dbPath: string, cursor: string): Promise<void> {
    service.faults.enqueue({ kind: 'status', status: 401 });
    expect((await runCli(BACKFILL, environment)).code).toBe(1);
    // An older version stored it, or it expired: the service refuses it.
    const changed = withWritableDb(dbPath, (db) => db.prepare('UPDATE sync_cursors SET next_page = ?, last_id = 1 WHERE completed_at IS NULL').run(cursor).changes);
    expect(changed).toBe(1);
    service.stats.reset();
  }

  it('a stored cursor that is not a page number restarts its window from the first page, once, without being sent', async () => {
    const service = await start(dataset(2000, 37));
    const dbPath = tempDbPath();
    const environment = env(service, dbPath, { THREAT_MIRROR_CONCURRENCY: '1' });
    await windowWithStoredCursor(service, environment, dbPath, 'abc');

    const healed = await runCli(BACKFILL, environment);
    expect(healed.stderr).toBe('');
    expect(healed.code).toBe(0);
    const restarts = healed.logs.filter((line) => String(line.msg).startsWith('the stored cursor cannot be checked'));
    expect(restarts).toHaveLength(1);
    expect(restarts[0]).toMatchObject({ level: 40, cursor: 'abc' });
    expect(service.stats.requests.filter((request) => (request.body as { next_page?: string }).next_page === 'abc')).toEqual([]);
    expect(mirroredThreats(dbPath, 'acme')).toEqual(expected(service));
    expect(scalar(dbPath, 'SELECT count(*) FROM sync_plans')).toBe(0);
  });

  it('a stored cursor the service answers 400 to (its check of the page before it) restarts its window from the first page, once, and the run completes', async () => {
    const service = await start(dataset(2000, 37));
    const dbPath = tempDbPath();
    const environment = env(service, dbPath, { THREAT_MIRROR_CONCURRENCY: '1' });
    await windowWithStoredCursor(service, environment, dbPath, '2');
    service.faults.enqueue({ kind: 'status', status: 400 });

    const healed = await runCli(BACKFILL, environment);
    expect(healed.stderr).toBe('');
    expect(healed.code).toBe(0);
    const restarts = healed.logs.filter((line) => String(line.msg).startsWith('the service refused the stored cursor (HTTP 400)'));
    expect(restarts).toHaveLength(1);
    expect(restarts[0]).toMatchObject({ level: 40, cursor: '2' });
    expect(service.stats.requests[0]).toMatchObject({ status: 400 });
    expect(mirroredThreats(dbPath, 'acme')).toEqual(expected(service));
    expect(scalar(dbPath, 'SELECT count(*) FROM sync_plans')).toBe(0);
  });

  it('a window whose first page is refused too after the restart fails instead of looping', async () => {
    const service = await start(dataset(2000, 37));
    const dbPath = tempDbPath();
    const environment = env(service, dbPath, { THREAT_MIRROR_CONCURRENCY: '1' });
    await windowWithStoredCursor(service, environment, dbPath, '2');
    service.faults.enqueue({ kind: 'status', status: 400 }, { times: 2 });
    const result = await runCli(BACKFILL, environment);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/refused the request \(HTTP 400\)/);
    expect(service.stats.requests).toHaveLength(2);
  });
});

describe('raw text of rejected records', () => {
  it('keeps every digit of an id beyond 2^53, rejected as not a safe integer', async () => {
    const service = await start();
    const dbPath = tempDbPath();
    const huge = '{"id":9007199254740993,"content":"https://huge-id.example","type":"URL","blockedAt":"2026-03-14T01:02:03.004Z"}';
    const fraction = '{ "id" : 1.50, "content" : "https://fraction.example", "type" : "URL", "blockedAt" : "2026-03-14T01:02:03.004Z" }';
    service.faults.enqueue({ kind: 'rawRecords', records: [huge, fraction] });
    const result = await runCli(BACKFILL, env(service, dbPath, { THREAT_MIRROR_CONCURRENCY: '1' }));
    expect(result.code).toBe(0);
    const rejected = withDb(dbPath, (db) => db.prepare('SELECT raw, reason FROM rejected_records ORDER BY id').all());
    expect(rejected).toEqual([
      { raw: huge, reason: 'id is not a safe integer (beyond 2^53 - 1, so it cannot be stored exactly); see raw for the digits as sent' },
      { raw: fraction, reason: 'id must be a positive integer, got 1.5' },
    ]);
    expect(mirroredThreats(dbPath, 'acme')).toEqual(expected(service));
  });
});

describe('deprecation notices', () => {
  it('are logged once per run per endpoint with both values, shown in status, and counted in /metrics', async () => {
    const service = await start(dataset(900, 41));
    const dbPath = tempDbPath();
    const deprecation = '@1767225600';
    const sunset = 'Wed, 01 Jul 2026 00:00:00 GMT';
    service.faults.setRandom({ kind: 'deprecation', deprecation, sunset }, 1);
    const daemon = startCli([], env(service, dbPath, { THREAT_MIRROR_SCHEDULE: '* * * * * *', THREAT_MIRROR_HTTP_PORT: '0', THREAT_MIRROR_INITIAL_DAYS: '3' }));
    const port = await servingPort(daemon);
    const runsDone = (): number => daemon?.logs.filter((line) => line.msg === 'sync of organization "acme" succeeded').length ?? 0;
    await daemon.waitForLog(() => runsDone() >= 2);
    const metrics = await (await fetch(`http://127.0.0.1:${String(port)}/metrics`)).text();
    daemon.kill('SIGTERM');
    const exit = await daemon.exited;
    expect(exit.code).toBe(0);

    const warnings = exit.logs.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('the service announces that POST /threats/list is deprecated'));
    const succeeded = exit.logs.filter((line) => line.msg === 'sync of organization "acme" succeeded').length;
    const finished = exit.logs.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('sync of organization "acme"')).length;
    // One per run (a run cut by SIGTERM may have warned too), however many requests each run made.
    expect(warnings.length).toBeGreaterThanOrEqual(succeeded);
    expect(warnings.length).toBeLessThanOrEqual(finished);
    expect(service.stats.requests.length).toBeGreaterThan(finished);
    expect(warnings[0]).toMatchObject({ level: 40, endpoint: 'POST /threats/list', deprecation, sunset });
    expect(String(warnings[0]?.msg)).toContain(`Deprecation: ${deprecation}, Sunset: ${sunset}`);
    const counted = /^threat_mirror_deprecation_notices_total\{endpoint="POST \/threats\/list"\} (\d+)$/m.exec(metrics);
    expect(Number(counted?.[1])).toBeGreaterThanOrEqual(2);

    const status = await runCli(['status'], { THREAT_MIRROR_DB: dbPath });
    expect(status.stdout).toContain(`POST /threats/list deprecated (Deprecation: ${deprecation}; Sunset: ${sunset})`);
    const json = await runCli(['status', '--json'], { THREAT_MIRROR_DB: dbPath });
    expect((JSON.parse(json.stdout) as { serviceNotices: unknown }).serviceNotices).toEqual([
      { endpoint: 'POST /threats/list', deprecation, sunset, seenAt: expect.any(String) as unknown },
    ]);
  });
});

describe('secrets', () => {
  it('never reach stdout, stderr or any text column, whatever fails', async () => {
    const service = await start();
    const other = await startRecordingServer();
    const dir = tempDir();
    const dbPath = join(dir, 'mirror.db');
    const inUrl = `https://admin:${PASSWORD}@proxy.example/path`;
    const echo = `key ${KEY} and ${inUrl} and ${encodeURIComponent(KEY)}`;
    const outputs: Array<[string, CliResult]> = [];
    const run = async (name: string, args: string[], extra: Record<string, string> = {}): Promise<CliResult> => {
      const result = await runCli(args, env(service, dbPath, { THREAT_MIRROR_CONCURRENCY: '1', ...extra }));
      outputs.push([name, result]);
      return result;
    };

    // HTTP errors that echo the key and a URL password: a refusal (read, quoted) and a 5xx (retried).
    service.faults.enqueue({ kind: 'status', status: 500, message: echo }, { times: 1 });
    service.faults.enqueue({ kind: 'status', status: 400, message: echo }, { times: 1 });
    expect((await run('http error', BACKFILL)).code).toBe(1);
    // A bad cursor that quotes them.
    service.faults.enqueue({ kind: 'badCursor', value: { token: KEY, next: inUrl } }, { times: 3 });
    expect((await run('bad cursor', BACKFILL)).code).toBe(1);
    // A redirect that carries them, to another origin.
    const location = `${other.url.replace('http://', `http://admin:${PASSWORD}@`)}/threats/list?key=${KEY}`;
    service.faults.enqueue({ kind: 'redirect', status: 302, location }, { times: 1 });
    expect((await run('redirect', BACKFILL)).code).toBe(1);
    // Validation: rejected records that hold them, and deprecation headers that do.
    service.faults.enqueue({ kind: 'rawRecords', records: [JSON.stringify({ id: KEY, content: inUrl, type: 'URL', blockedAt: 'x' }), JSON.stringify({ id: 5, content: 7, type: KEY, blockedAt: inUrl })] });
    service.faults.setRandom({ kind: 'deprecation', deprecation: `@1 ${KEY}`, sunset: inUrl }, 1);
    expect((await run('validation', BACKFILL)).code).toBe(0);
    expect(scalar(dbPath, 'SELECT count(*) FROM rejected_records')).toBe(2);
    // A write that SQLite refuses with a message holding them.
    service.faults.clear();
    service.addThreats([{ id: 77_000_001, content: 'https://late.example', type: 'URL', blockedAt: `${TODAY}T11:00:00.000Z`, organization: 'acme' }]);
    withWritableDb(dbPath, (db) => db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON threats BEGIN SELECT RAISE(ABORT, 'refused ${echo}'); END`));
    const refusedWrite = await run('write error', BACKFILL);
    expect(refusedWrite.code).toBe(1);
    expect(refusedWrite.stderr).toContain('refused key [redacted]');
    // The test planted the secrets in the schema itself: wipe them from the file's free pages too.
    withWritableDb(dbPath, (db) => {
      db.pragma('secure_delete = ON');
      db.exec('DROP TRIGGER refuse');
    });
    // A network error: nothing listens there.
    const closed = await startRecordingServer();
    await closed.close();
    expect((await run('network error', BACKFILL, { THREAT_MIRROR_API_URL: closed.url })).code).toBe(1);
    // And the key in a file, the URL with credentials.
    expect((await run('credentials', ['--once'], { THREAT_MIRROR_API_URL: service.url.replace('http://', `http://u:${PASSWORD}@`) })).code).toBe(2);
    outputs.push(['status', await runCli(['status'], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_API_KEY: KEY })]);
    outputs.push(['status --json', await runCli(['status', '--json'], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_API_KEY: KEY })]);

    // Each failure path was taken, and says so without the secrets.
    const stderr = (name: string): string => outputs.find(([which]) => which === name)?.[1].stderr ?? '';
    expect(stderr('http error')).toMatch(/refused the request \(HTTP 400\): key \[redacted\] and https:\/\/\[redacted\]@proxy\.example\/path/);
    expect(stderr('bad cursor')).toContain('got {"token":"[redacted]","next":"https://[redacted]@proxy.example/path"}');
    expect(stderr('redirect')).toContain(`redirect 302 to ${other.url}, another origin`);
    expect(stderr('network error')).toMatch(/network error/);
    expect(other.received).toHaveLength(0);
    const logged = outputs.flatMap(([, result]) => result.logs);
    expect(logged.some((line) => line.msg === 'request failed, will retry: organization "acme": server error (HTTP 500)')).toBe(true);
    expect(logged.some((line) => line.endpoint === 'POST /threats/list' && line.deprecation === '@1 [redacted]')).toBe(true);

    for (const [name, result] of outputs) {
      expectNoLeak(`${name} stdout`, result.stdout);
      expectNoLeak(`${name} stderr`, result.stderr);
    }
    const text = allText(dbPath);
    expect(text.some((value) => value.startsWith('rejected_records.raw:') && value.includes('[redacted]'))).toBe(true);
    expect(text.some((value) => value.startsWith('sync_runs.error:') && value.includes('[redacted]'))).toBe(true);
    expectNoLeak('the database', text.join('\n'));
    // And the file's bytes themselves (free pages included), after the writer closed it.
    expectNoLeak('the database file', readFileSync(dbPath).toString('latin1'));
    expect(runs(dbPath).map((entry) => entry.status)).toEqual(['failed', 'failed', 'failed', 'succeeded', 'failed', 'failed']);
  });
});
