// Issue 42 case 1: every answer says whether the mirror can vouch for it. A script runs
// `threat-mirror lookup --org "$ORG" "$url"` from a shell under every state of the mirror (fresh,
// stale, never synced, an unknown organization, the service down, an allowlisted value) and gets
// the exit code the docs' table gives for the verdict; `status` and /v1/lookup agree. The docs'
// two tables are read here, so a table that disagrees with the program fails too.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Standin, StandinThreat } from '../src/standin/index.js';
import { CLI_PATH, runCli, servingPort, startCli } from './support/cli.js';
import { type Env, mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath, tempDir } from './support/temp.js';

const ROOT = join(import.meta.dirname, '..');
const T0 = '2026-03-15T12:00:00.000Z';
const TODAY = T0.slice(0, 10);
const KEY = 'acme-key-vouch-7d21';
const BLOCKED = 'https://login.evil-phish.example/verify';
const UNLISTED = 'https://innocent.example/';

const at = (minutes: number): string => new Date(Date.parse(T0) + minutes * 60_000).toISOString();
const env = mirrorEnvFor(KEY, T0, { THREAT_MIRROR_RETRY_MIN_MS: '5', THREAT_MIRROR_RETRY_MAX_MS: '20', THREAT_MIRROR_MAX_RETRIES: '0', THREAT_MIRROR_INITIAL_DAYS: '5' });
const threats: StandinThreat[] = [{ id: 1, content: 'https://evil-phish.example/', type: 'URL', blockedAt: `${TODAY}T09:00:00.000Z`, organization: 'acme' }];

type Verdict = 'blocked' | 'not_blocked' | 'unknown';

/** A table of `| Exit | Verdict | When |` rows from a markdown file: its rows as written, and exit code by verdict. */
function exitTable(file: string): { rows: string[]; exitOf: Map<string, number> } {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const start = text.indexOf('| Exit | Verdict | When |');
  expect(start, `${file} has the table of exit codes`).toBeGreaterThanOrEqual(0);
  const rows = text.slice(start).split('\n').slice(2).filter((line, index, all) => line.startsWith('|') && all.slice(0, index).every((before) => before.startsWith('|')));
  const exitOf = new Map<string, number>();
  for (const row of rows) {
    const [exit, verdict] = row.split('|').slice(1, 3).map((cell) => cell.trim());
    exitOf.set(verdict?.replace(/`/g, '') || 'usage', Number(exit));
  }
  return { rows, exitOf };
}

const documented = exitTable('docs/lookup.md').exitOf;

/** A folder with `threat-mirror` in it, as `npm install -g .` puts it on a PATH. */
function binFolder(): string {
  const bin = join(tempDir(), 'bin');
  mkdirSync(bin);
  symlinkSync(CLI_PATH, join(bin, 'threat-mirror'));
  return bin;
}

/** What a shell script runs, with $ORG and $url in its environment; exit code and output. */
function script(line: string, variables: Env): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('sh', ['-c', line], { env: { PATH: `${binFolder()}:${process.env.PATH ?? ''}`, NODE_OPTIONS: '', ...variables } });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const lookupScript = (variables: Env, org: string, url: string) => script('threat-mirror lookup --org "$ORG" "$url"', { ...variables, ORG: org, url });

/** A file synced by `--once` at T0 (fresh then), and the stand-in that served it. */
async function syncedAtT0(): Promise<{ service: Standin; dbPath: string }> {
  const service = await serveThreats(KEY, T0, threats);
  const dbPath = tempDbPath();
  expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
  return { service, dbPath };
}

/** The verdict --json gives for one value, and the exit code. */
async function jsonVerdict(variables: Env, org: string, url: string): Promise<{ code: number | null; verdict: Verdict; reason: string }> {
  const result = await runCli(['lookup', '--json', '--org', org, url], variables);
  const document = JSON.parse(result.stdout) as { results: Array<{ verdict: Verdict; reason: string }> };
  return { code: result.code, verdict: document.results[0]?.verdict as Verdict, reason: document.results[0]?.reason ?? '' };
}

describe('a script acts on lookup\'s exit code (issue 42 case 1)', { timeout: 120_000 }, () => {
  it('README and docs/lookup.md give one table of exit codes, with a row for each verdict and for usage', () => {
    expect(exitTable('README.md').rows).toEqual(exitTable('docs/lookup.md').rows);
    expect([...documented.keys()].sort()).toEqual(['blocked', 'not_blocked', 'unknown', 'usage']);
  });

  it('gets the documented exit code under every state of the mirror, and the same verdict in --json', async () => {
    const { service, dbPath } = await syncedAtT0();
    const reader = (minutes: number, extra: Env = {}): Env => ({ THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: at(minutes), ...extra });
    const allowlist = join(tempDir(), 'allow.txt');
    writeFileSync(allowlist, 'login.evil-phish.example   # our own login page, mislisted\n');
    const states: Array<[string, Env, string, string, Verdict | 'usage']> = [
      ['fresh, blocked', reader(1), 'acme', BLOCKED, 'blocked'],
      ['fresh, not listed', reader(1), 'acme', UNLISTED, 'not_blocked'],
      ['stale, not listed', reader(120), 'acme', UNLISTED, 'unknown'],
      ['stale, blocked', reader(120), 'acme', BLOCKED, 'blocked'],
      ['an unknown organization', reader(1), 'acmee', BLOCKED, 'usage'],
      ['allowlisted', reader(1, { THREAT_MIRROR_ALLOWLIST: allowlist }), 'acme', BLOCKED, 'not_blocked'],
      ['allowlisted, stale', reader(120, { THREAT_MIRROR_ALLOWLIST: allowlist }), 'acme', BLOCKED, 'not_blocked'],
    ];
    // Every state's exit code at once, beside the documented one: a failure shows the whole table.
    const ran = await Promise.all(states.map(([, variables, org, url]) => lookupScript(variables, org, url)));
    expect(states.map(([state], index) => `${state}: ${ran[index]?.code}`)).toEqual(states.map(([state, , , , verdict]) => `${state}: ${documented.get(verdict)}`));
    expect(ran[4]?.stderr).toMatch(/--org: "acmee" is not an organization of this file \(it holds acme\)/);
    for (const [state, variables, org, url, verdict] of states.filter(([, , , , verdict]) => verdict !== 'usage')) {
      expect((await jsonVerdict(variables, org, url)).verdict, state).toBe(verdict);
    }
    // Why it cannot vouch, in words a person reads.
    expect((await lookupScript(reader(120), 'acme', UNLISTED)).stdout).toMatch(/cannot vouch: .*organization "acme" last synced successfully at 2026-03-15T12:00:\S+, over 1200 s ago/);

    // The service down: the next run fails. The last success is a minute old, but the last run failed.
    service.faults.enqueue({ kind: 'status', status: 503 }, { times: 100 });
    expect((await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_NOW: at(1) }))).code).toBe(1);
    const down = await lookupScript(reader(2), 'acme', UNLISTED);
    expect(down.code).toBe(documented.get('unknown'));
    expect(down.stdout).toMatch(/organization "acme": the last run failed: /);
    expect((await lookupScript(reader(2), 'acme', BLOCKED)).code).toBe(documented.get('blocked'));
  });

  it("an organization's scope: a miss of a value whose threats it never mirrors is unknown, naming the scope, with --fresh too", async () => {
    const address = 'eip155:1:0xabc0000000000000000000000000000000000009';
    const service = await serveThreats(KEY, T0, [...threats, { id: 2, content: address, type: 'ADDRESS', blockedAt: `${TODAY}T09:30:00.000Z`, organization: 'acme' }]);
    const dbPath = tempDbPath();
    const scoped = env(service, dbPath, { THREAT_MIRROR_ASSET_TYPES: 'PAGE,URL' });
    expect((await runCli(['--once'], scoped)).code).toBe(0);
    const reader = { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: at(1) };
    // Within the scope: a URL's threats are URL and PAGE.
    expect((await lookupScript(reader, 'acme', UNLISTED)).code).toBe(documented.get('not_blocked'));
    expect((await lookupScript(reader, 'acme', BLOCKED)).code).toBe(documented.get('blocked'));
    // An address the service blocks, which the mirror never holds: not "not blocked".
    const outside = await lookupScript(reader, 'acme', '0xabc0000000000000000000000000000000000009');
    expect(outside.code).toBe(documented.get('unknown'));
    expect(outside.stdout).toContain('organization "acme" mirrors only PAGE, URL (THREAT_MIRROR_ASSET_TYPES): ADDRESS threats would match it');
    // A free text only a threat's exact content matches, of any type.
    expect((await lookupScript(reader, 'acme', 'some-app-listing-id')).code).toBe(documented.get('unknown'));
    // Asked with the scope's assetType, the service cannot list it either.
    const fresh = await runCli(['lookup', '--fresh', '--org', 'acme', '0xabc0000000000000000000000000000000000009'], { ...scoped, THREAT_MIRROR_NOW: at(1) });
    expect(fresh.code).toBe(documented.get('unknown'));
  });

  it('a first sync that failed (a wrong key) is never synced: the documented exit code, from lookup and status', async () => {
    const service = await serveThreats(KEY, T0, threats);
    const dbPath = tempDbPath();
    expect((await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_API_KEY: 'a-wrong-key-0000' }))).code).toBe(1);
    const ran = await lookupScript({ THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: at(1) }, 'acme', UNLISTED);
    expect(ran.code).toBe(documented.get('unknown'));
    expect(ran.stdout).toMatch(/organization "acme" has not synced successfully yet/);
    const status = await runCli(['status'], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: at(1) });
    expect(status.code).toBe(3);
    expect(status.stdout).toMatch(/cannot vouch for the mirror \(exit 3\): organization "acme" has not synced successfully yet; organization "acme": the last run failed: /);
  });

  it('a configured organization the file has never seen is never synced, not unknown (exit 3); one neither configured nor held exits 2', async () => {
    const { dbPath } = await syncedAtT0();
    const configured = { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: at(1), THREAT_MIRROR_ORGS: 'acme,globex' };
    const both = await runCli(['lookup', UNLISTED], configured);
    expect(both.code).toBe(3);
    expect(both.stdout).toMatch(/organization "globex" has not synced successfully yet/);
    expect((await runCli(['lookup', '--org', 'acme', UNLISTED], configured)).code).toBe(1);
    expect((await runCli(['lookup', '--org', 'globex', UNLISTED], configured)).code).toBe(3);
    const misspelt = await runCli(['lookup', '--org', 'acmee', UNLISTED], configured);
    expect(misspelt.code).toBe(2);
    expect(misspelt.stderr).toContain('--org: "acmee" is not an organization of this file (it holds acme; configured: acme, globex)');
  });

  it('status exits 0 only when every organization is synced and fresh, 3 naming each and why, 2 for an unknown --org', async () => {
    const { service, dbPath } = await syncedAtT0();
    const status = (minutes: number, ...args: string[]) => runCli(['status', ...args], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: at(minutes) });
    const fresh = await status(1);
    expect(fresh.code).toBe(0);
    expect(fresh.stdout).toMatch(/ {2}sync {14}synced and fresh \(last success 2026-03-15T12:00:/);
    expect(fresh.stdout.endsWith('every organization is synced and fresh\n')).toBe(true);
    const stale = await status(120);
    expect(stale.code).toBe(3);
    expect(stale.stdout).toMatch(/cannot vouch for the mirror \(exit 3\): organization "acme" last synced successfully at .*, over 1200 s ago\n$/);
    const json = JSON.parse((await status(120, '--json')).stdout) as { syncedAndFresh: boolean; problems: string[]; organizations: Array<{ sync: { state: string } }> };
    expect(json).toMatchObject({ syncedAndFresh: false, organizations: [{ sync: { state: 'stale' } }] });
    const unknown = await status(1, '--org', 'acmee');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--org: "acmee" is not an organization of this file/);
    service.faults.enqueue({ kind: 'status', status: 503 }, { times: 100 });
    expect((await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_NOW: at(1) }))).code).toBe(1);
    const failing = await status(2);
    expect(failing.code).toBe(3);
    expect(failing.stdout).toMatch(/organization "acme": the last run failed: /);
  });
});

describe('/v1/lookup carries the same verdicts (issue 42 case 1)', { timeout: 120_000 }, () => {
  interface Served {
    status: number;
    verdict: Verdict;
    reason: string;
    state: string | undefined;
  }

  async function ask(port: number, query: string): Promise<Served> {
    const response = await fetch(`http://127.0.0.1:${port}/v1/lookup?${query}`);
    const body = (await response.json()) as { results: Array<{ verdict: Verdict; reason: string }>; mirror: { organizations: Array<{ state: string }> } };
    return { status: response.status, verdict: body.results[0]?.verdict as Verdict, reason: body.results[0]?.reason ?? '', state: body.mirror.organizations[0]?.state };
  }

  const value = (url: string): string => `org=acme&value=${encodeURIComponent(url)}`;

  /** A daemon serving /v1/lookup; `ran()` resolves once its run at start has ended. */
  async function daemon(service: Standin, dbPath: string, extra: Env): Promise<{ port: number; ran: () => Promise<unknown> }> {
    const started = startCli([], env(service, dbPath, { THREAT_MIRROR_HTTP_PORT: '0', THREAT_MIRROR_REQUEST_TIMEOUT_MS: '60000', ...extra }));
    const port = await servingPort(started);
    return { port, ran: () => started.waitForLog((line) => typeof line.msg === 'string' && line.msg.startsWith('sync of organization "acme" ')) };
  }

  it('fresh, allowlisted and an unknown organization', async () => {
    const { service, dbPath } = await syncedAtT0();
    const allowlist = join(tempDir(), 'allow.txt');
    writeFileSync(allowlist, 'login.evil-phish.example\n');
    const { port, ran } = await daemon(service, dbPath, { THREAT_MIRROR_NOW: at(1), THREAT_MIRROR_ALLOWLIST: allowlist });
    await ran();
    expect(await ask(port, value(UNLISTED))).toMatchObject({ status: 200, verdict: 'not_blocked', state: 'fresh' });
    expect(await ask(port, value('https://other.evil-phish.example/'))).toMatchObject({ status: 200, verdict: 'blocked', reason: 'threat #1 (URL) matches it for acme' });
    expect(await ask(port, value(BLOCKED))).toMatchObject({ status: 200, verdict: 'not_blocked', reason: 'allowed locally by THREAT_MIRROR_ALLOWLIST line 1 "login.evil-phish.example"' });
    const misspelt = await fetch(`http://127.0.0.1:${port}/v1/lookup?org=acmee&value=x`);
    expect(misspelt.status).toBe(400);
    expect(((await misspelt.json()) as { error: string }).error).toBe('org: "acmee" is not an organization this daemon mirrors (acme)');
  });

  it('stale: the daemon\'s run hangs on a slow service while its last success grows old', async () => {
    const { service, dbPath } = await syncedAtT0();
    service.faults.enqueue({ kind: 'hang' }, { times: 100 });
    // Two hours later, the default schedule (stale after 1,200 s): the run at start is still waiting.
    const { port } = await daemon(service, dbPath, { THREAT_MIRROR_NOW: at(120) });
    const unlisted = await ask(port, value(UNLISTED));
    expect(unlisted).toMatchObject({ status: 200, verdict: 'unknown', state: 'stale' });
    expect(unlisted.reason).toMatch(/organization "acme" last synced successfully at .*, over 1200 s ago/);
    expect(await ask(port, value(BLOCKED))).toMatchObject({ status: 200, verdict: 'blocked', state: 'stale' });
  });

  it('never synced (a wrong key) and the service down', async () => {
    const service = await serveThreats(KEY, T0, threats);
    const never = await daemon(service, tempDbPath(), { THREAT_MIRROR_NOW: at(1), THREAT_MIRROR_API_KEY: 'a-wrong-key-0000' });
    await never.ran();
    expect(await ask(never.port, value(UNLISTED))).toMatchObject({ status: 200, verdict: 'unknown', state: 'never_synced' });

    const synced = await syncedAtT0();
    synced.service.faults.enqueue({ kind: 'status', status: 503 }, { times: 1000 });
    const down = await daemon(synced.service, synced.dbPath, { THREAT_MIRROR_NOW: at(1) });
    await down.ran();
    const answer = await ask(down.port, value(UNLISTED));
    expect(answer).toMatchObject({ status: 200, verdict: 'unknown', state: 'failing' });
    expect(answer.reason).toMatch(/organization "acme": the last run failed: /);
  });
});
