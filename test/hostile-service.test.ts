// Issue 32 items 3, 4, 5 and 7: what a hostile service (or anything between it and us) can send.
// The built CLI against the stand-in's faults and small hostile servers on 127.0.0.1: under each
// answer the organization fails with exit 1 and a sentence, the process never aborts (exit 134),
// and nothing it prints drives the operator's terminal.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats, type Standin } from '../src/standin/index.js';
import { type CliProcess, type CliResult, runCli, startCli } from './support/cli.js';
import { afterThisTest } from './support/cleanup.js';
import { runs, scalar } from './support/mirror-db.js';
import { EVERY_SECOND_DAEMON, mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath } from './support/temp.js';

const KEY = 'hostile-service-key-7d1c';
const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);

const env = mirrorEnvFor(KEY, NOW, {
  THREAT_MIRROR_INITIAL_DAYS: '2',
  THREAT_MIRROR_RETRY_MIN_MS: '5',
  THREAT_MIRROR_RETRY_MAX_MS: '20',
  THREAT_MIRROR_MAX_RETRIES: '2',
  THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '0',
});

function start(count = 150): Promise<Standin> {
  return serveThreats(KEY, NOW, generateThreats({ seed: 32, organizations: ['acme'], count, fromDay: addDays(TODAY, -1), toDay: TODAY }));
}

/** The process's result once it exits, or a failure naming what it printed if it is still running after `ms`. */
async function exitWithin(process: CliProcess, ms: number): Promise<CliResult> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void process.stop('SIGKILL');
      reject(new Error(`still running after ${ms} ms; stderr so far:\n${process.stderr.slice(0, 2000)}`));
    }, ms);
  });
  try {
    return await Promise.race([process.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('Retry-After is capped (issue 32 item 5)', () => {
  it('a 429 asking for 99,999,999 s fails the run at once with a message, and no TimeoutOverflowWarning', async () => {
    const service = await start();
    const dbPath = tempDbPath();
    service.faults.enqueue({ kind: 'rateLimit', retryAfter: '99999999' });
    const result = await exitWithin(startCli(['--once'], env(service, dbPath, { THREAT_MIRROR_CONCURRENCY: '1' })), 15_000);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the service asked to wait 99999999 s (Retry-After), longer than the 300 s THREAT_MIRROR_RETRY_AFTER_MAX_MS allows');
    expect(result.stderr + result.stdout).not.toContain('TimeoutOverflowWarning');
    expect(runs(dbPath).at(-1)).toMatchObject({ status: 'failed' });
  });

  it('a Retry-After within THREAT_MIRROR_RETRY_AFTER_MAX_MS is waited for, and the run succeeds', async () => {
    const service = await start();
    const dbPath = tempDbPath();
    service.faults.enqueue({ kind: 'rateLimit', retryAfter: '1' });
    const result = await exitWithin(startCli(['--once'], env(service, dbPath)), 30_000);
    expect(result.code).toBe(0);
    expect(service.stats.earlyRequests(KEY)).toBe(0);
    // The positive control: the 429 was served, the request was made again a second later or more, and the run counted the retry.
    const answered = service.stats.requests.filter((request) => request.path === '/threats/list');
    const limited = answered.findIndex((request) => request.status === 429);
    expect(limited).toBeGreaterThanOrEqual(0);
    const retried = answered.find((request, index) => index > limited && JSON.stringify(request.body) === JSON.stringify(answered[limited]?.body));
    expect(retried?.status).toBe(200);
    expect((retried?.at ?? 0) - (answered[limited]?.at ?? 0)).toBeGreaterThanOrEqual(900);
    expect(runs(dbPath).at(-1)).toMatchObject({ status: 'succeeded', retries: 1 });
  });

  it("in the daemon, the next run is not held: it runs on the next tick and succeeds", async () => {
    const service = await start();
    const dbPath = tempDbPath();
    service.faults.enqueue({ kind: 'rateLimit', retryAfter: '86400' });
    const daemon = startCli([], env(service, dbPath, EVERY_SECOND_DAEMON));
    const failed = await daemon.waitForLog((line) => line.status === 'failed');
    expect(String(failed.error)).toContain('asked to wait 86400 s (Retry-After)');
    await daemon.waitForLog((line) => line.status === 'succeeded' && typeof line.msg === 'string' && line.msg.startsWith('sync of organization'));
    expect(runs(dbPath).filter((run) => run.stream === 'threats').map((run) => run.status).slice(0, 2)).toEqual(['failed', 'succeeded']);
  });
});

/** What a terminal acts on: C0 controls but newline and tab, DEL, and the C1 block (CSI U+009B among them). */
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('human-readable output escapes control characters (issue 32 item 7)', () => {
  // A fake "synced OK" line over the real one, a window title (OSC 0, ended by BEL), a planted
  // hyperlink (OSC 8), and a C1 CSI that colours the rest of the line.
  const planted = '\u001b[2K\rthreat-mirror: synced OK \u001b]0;pwned\u0007 \u001b]8;;https://evil.example/\u001b\\click\u001b]8;;\u001b\\ \u009b31m red';

  it('a 400 whose message holds ESC, OSC, BEL and C1 sequences reaches neither stderr nor `status` raw; `status --json` keeps the value exact', async () => {
    const service = await start();
    const dbPath = tempDbPath();
    service.faults.enqueue({ kind: 'status', status: 400, message: planted }, { times: 10 });
    const result = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_CONCURRENCY: '1' }));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the service refused the request (HTTP 400)');
    expect(result.stderr).not.toMatch(TERMINAL_CONTROLS);
    expect(result.stderr).toContain('\\u001b]0;pwned\\u0007');

    const stored = runs(dbPath).at(-1)?.error as string;
    expect(stored).toContain('\u001b]0;pwned\u0007');
    const status = await runCli(['status'], env(service, dbPath));
    // The run failed: status says so, and that the mirror cannot vouch (exit 3).
    expect(status.code).toBe(3);
    expect(status.stdout).toContain('the service refused the request (HTTP 400)');
    expect(status.stdout).not.toMatch(TERMINAL_CONTROLS);
    const json = await runCli(['status', '--json'], env(service, dbPath));
    expect(json.stdout).not.toMatch(TERMINAL_CONTROLS);
    const parsed = JSON.parse(json.stdout) as { organizations: Array<{ recentRuns: Array<{ error: string | null }> }> };
    expect(parsed.organizations[0]?.recentRuns[0]?.error).toBe(stored);
  });
});

/**
 * A server on 127.0.0.1 that answers every POST /threats/list with `body(request number, cursor
 * asked for)`: the shapes a hostile service (or anything between it and us) can send.
 */
async function startHostileService(body: (request: number, cursor: string | undefined) => string): Promise<string> {
  let requests = 0;
  const server = createServer((request, response) => {
    let text = '';
    request.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
    });
    request.on('end', () => {
      const cursor = (JSON.parse(text) as { next_page?: string }).next_page;
      requests += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end(body(requests, cursor));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  afterThisTest('servers', () => new Promise((resolve) => server.close(() => resolve(undefined))));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function hostileEnv(url: string, dbPath: string): Record<string, string> {
  return { ...env({ url } as Standin, dbPath), THREAT_MIRROR_INITIAL_DAYS: '1', THREAT_MIRROR_CONCURRENCY: '1', THREAT_MIRROR_MAX_RETRIES: '1' };
}

/** Exit 1 with a sentence for the organization, never an abort (134) or a signal. */
function expectOrganizationFailed(result: CliResult, sentence: string): void {
  expect(result.signal, result.stderr.slice(0, 500)).toBeNull();
  expect(result.code, result.stderr.slice(0, 500)).toBe(1);
  expect(result.stderr).toContain('organization "acme" failed: ');
  expect(result.stderr).toContain(sentence);
}

const record = (id: number, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ id, content: `https://r${id}.example/`, type: 'URL', blockedAt: `${TODAY}T01:00:00.000Z`, ...extra });

describe('bounded work per response (issue 32 items 3 and 4)', () => {
  it('a page of 200,000 tiny records (400 KB) fails the organization with a sentence; it aborted the process (heap) before', async () => {
    const url = await startHostileService(() => `{"threats":[${Array(200_000).fill(1).join(',')}],"next_page":null}`);
    const dbPath = tempDbPath();
    const result = await exitWithin(startCli(['--once'], hostileEnv(url, dbPath)), 30_000);
    expectOrganizationFailed(result, 'response body holds more than 100000 values; no page of the service does');
  });

  it('a page of 101 valid records (more than per_page) is a broken response: retried, then the organization fails', async () => {
    let served = 0;
    const url = await startHostileService(() => {
      served += 1;
      return `{"threats":[${Array.from({ length: 101 }, (_, index) => record(index + 1)).join(',')}],"next_page":null}`;
    });
    const result = await exitWithin(startCli(['--once'], hostileEnv(url, tempDbPath())), 30_000);
    expectOrganizationFailed(result, 'response holds 101 records, more than the 100 per_page asked for');
    // Retried: the first answer and THREAT_MIRROR_MAX_RETRIES=1 more.
    expect(served).toBe(2);
  });

  for (const levels of [1_000_000, 100_000]) {
    it(`an id nested ${levels.toLocaleString('en')} levels deep fails the organization with a sentence, not an abort or a stack overflow`, async () => {
      const url = await startHostileService(() => `{"threats":[{"id":${'['.repeat(levels)}1${']'.repeat(levels)}}],"next_page":null}`);
      const result = await exitWithin(startCli(['--once'], hostileEnv(url, tempDbPath())), 30_000);
      expectOrganizationFailed(result, 'response body nests values more than 32 levels deep');
      expect(result.stderr).not.toContain('Maximum call stack size exceeded');
    });
  }

  it('a fresh next_page of 1,000,000 digits on every page fails the organization at the first one', async () => {
    let page = 0;
    const url = await startHostileService(() => {
      page += 1;
      return `{"threats":[${record(page)}],"next_page":"${String(page % 9 + 1).repeat(1_000_000)}"}`;
    });
    const dbPath = tempDbPath();
    const result = await exitWithin(startCli(['--once'], hostileEnv(url, dbPath)), 30_000);
    expectOrganizationFailed(result, 'response "next_page" must be a positive integer in string form (at most 20 digits) or null');
    // Nothing of a broken page is committed, its cursor least of all.
    expect(scalar<number>(dbPath, 'SELECT count(*) FROM threats')).toBe(0);
    expect(scalar<number>(dbPath, 'SELECT coalesce(max(length(next_page)), 0) FROM sync_cursors')).toBeLessThanOrEqual(20);
  });

  it('distinct 60 KB types on every page are rejected records (10 kept a page, the rest counted), and the run ends', async () => {
    const pages = 12;
    const perPage = 50;
    const url = await startHostileService((_, cursor) => {
      const page = cursor === undefined ? 1 : Number(cursor);
      const records = Array.from({ length: perPage }, (_, index) => record(page * 1000 + index, { type: `${page}-${index}-`.padEnd(60_000, 'T') }));
      return `{"threats":[${records.join(',')}],"next_page":${page < pages ? `"${page + 1}"` : 'null'}}`;
    });
    const dbPath = tempDbPath();
    const result = await exitWithin(startCli(['--once'], hostileEnv(url, dbPath)), 60_000);
    expect(result.signal).toBeNull();
    expect(result.code, result.stderr.slice(0, 500)).toBe(0);
    expect(scalar<number>(dbPath, 'SELECT count(*) FROM rejected_records')).toBe(pages * 10);
    expect(scalar<string>(dbPath, 'SELECT reason FROM rejected_records LIMIT 1')).toMatch(/^type must be 1 to 64 printable ASCII characters/);
    const summary = result.logs.find((line) => typeof line.msg === 'string' && line.msg.startsWith('sync of organization'));
    expect(summary?.rejected).toBe(pages * perPage);
    // The run's row counts them all too, kept or not: what `status` and SQL readers see.
    expect(scalar<number>(dbPath, "SELECT threats_rejected FROM sync_runs WHERE stream = 'threats'")).toBe(pages * perPage);
    expect(result.logs.filter((line) => line.msg === 'record rejected and kept in rejected_records')).toHaveLength(pages * 10);
  });
});
