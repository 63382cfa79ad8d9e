// Issue 31: the daemon follows THREAT_MIRROR_ALLOWLIST while it runs. A changed file (written in
// place, renamed over, swapped as a ConfigMap swaps it) is in use within 5 s everywhere the daemon
// answers (/v1/lookup, its export files, the zone it serves over DNS, judged by a real Unbound that
// consults it before another feed), without a sync; a bad one is reported (log, /readyz, metrics)
// and the last good list stays; the service's data never changes because of it. One daemon for the
// file (no sync after its first: the schedule is yearly); each test goes on from the last one's state.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Standin, StandinThreat } from '../src/standin/index.js';
import { startStandin } from '../src/standin/index.js';
import { CliProcess, runCli, servingPort } from './support/cli.js';
import { promtoolCheckMetrics, skipWithout } from './support/judges.js';
import { withDb } from './support/mirror-db.js';
import { type Authority, type PolicyResolver, startAuthority, startPolicyResolver } from './support/policy-zones.js';
import { dig, freePort, ZONE } from './support/secondaries.js';
import { until as waitUntil } from './support/until.js';
import { mirrorEnvFor } from './support/service.js';
import { applyIxfr, ixfrRecords, recordsOf, serialOf } from './support/zone-records.js';

const NOW = '2026-03-15T12:00:00.000Z';
const YESTERDAY = '2026-03-14';
const KEY = 'acme-allowlist-daemon-key';

let nextId = 9_200_000;
function threat(content: string, type = 'URL'): StandinThreat {
  nextId += 1;
  return { id: nextId, content, type, blockedAt: `${YESTERDAY}T08:${String(nextId % 60).padStart(2, '0')}:00.000Z`, organization: 'acme' };
}

const PORTAL = threat('https://customer-portal.com/');
const FORM = threat('https://shared-docs.com/forms/abc');
const TREASURY = threat('eip155:1:0xAbC0000000000000000000000000000000000001', 'ADDRESS');
const VENDOR = threat('billing@vendor-bank.com', 'EMAIL');
const EVIL = threat('https://still-evil.com/');

let standin: Standin;
let daemon: CliProcess;
let authority: Authority;
let resolver: PolicyResolver;
let dir: string;
let allowlist: string;
let httpPort: number;
let dnsPort: number;
const files = (): { rpz: string; hosts: string; csv: string } => ({ rpz: join(dir, 'exports', 'threats.rpz'), hosts: join(dir, 'exports', 'hosts.txt'), csv: join(dir, 'exports', 'threats.csv') });

/** A wait that says, on timeout, what the daemon logged last. */
const until = (what: string, check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<number> => waitUntil(what, check, timeoutMs, () => daemon.stdout);

async function blocked(value: string): Promise<boolean> {
  const answer = (await (await fetch(`http://127.0.0.1:${httpPort}/v1/lookup?value=${encodeURIComponent(value)}`)).json()) as { results: Array<{ blocked: boolean }> };
  return answer.results[0]?.blocked ?? false;
}

const axfr = (): string[] => recordsOf(dig(['@127.0.0.1', '-p', String(dnsPort), ZONE, 'AXFR']).text);
const passthru = (host: string): string => `${host}.${ZONE}. 300 in cname rpz-passthru.`;

/** Everything the service's data is made of, and the change feed: the allowlist must leave it as it is. */
function serviceData(): string {
  return withDb(join(dir, 'mirror.db'), (db) => {
    const tables = ['threats', 'organization_threats', 'sync_windows', 'sync_checkpoints'].map((table) => JSON.stringify(db.prepare(`SELECT * FROM ${table} ORDER BY 1, 2`).raw().all()));
    return createHash('sha256').update(tables.join('\n')).digest('hex');
  });
}

/** What SQL readers see: the mirror's table allowlist (values, by line) and the threats enforced_threats leaves out. */
function sqlReaders(): { values: string[]; allowed: number[] } {
  return withDb(join(dir, 'mirror.db'), (db) => ({
    values: db.prepare('SELECT value FROM allowlist ORDER BY line').pluck().all() as string[],
    allowed: db.prepare('SELECT DISTINCT id FROM current_threats EXCEPT SELECT DISTINCT id FROM enforced_threats ORDER BY id').pluck().all() as number[],
  }));
}

/** Waits until everything that answers follows the list: lookups, the files, the zone, and Unbound through it. */
async function followed(portalAllowed: boolean, formAllowed: boolean): Promise<number> {
  return until(
    `the daemon answers with the portal ${portalAllowed ? 'allowed' : 'blocked'} and the form ${formAllowed ? 'allowed' : 'blocked'}`,
    async () =>
      (await blocked('https://customer-portal.com/x')) === !portalAllowed &&
      (await blocked('https://shared-docs.com/forms/abc/2')) === !formAllowed &&
      readFileSync(files().hosts, 'utf8').includes('0.0.0.0 customer-portal.com\n') === !portalAllowed &&
      readFileSync(files().csv, 'utf8').includes(`\r\n${FORM.id},`) === !formAllowed &&
      readFileSync(files().rpz, 'utf8').includes('\ncustomer-portal.com CNAME rpz-passthru.\n') === portalAllowed &&
      sqlReaders().allowed.includes(PORTAL.id) === portalAllowed &&
      sqlReaders().allowed.includes(FORM.id) === formAllowed &&
      axfr().includes(passthru('customer-portal.com')) === portalAllowed &&
      (portalAllowed ? await resolver.resolves('customer-portal.com', '192.0.2.80') : await resolver.blocks('customer-portal.com')),
    8_000,
  );
}

describe.skipIf(skipWithout(['unbound', 'dig', 'promtool']))('THREAT_MIRROR_ALLOWLIST followed by the daemon', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'threat-mirror-allowlist-daemon-'));
    allowlist = join(dir, 'allow.txt');
    writeFileSync(allowlist, '# nothing allowed yet\n');
    standin = await startStandin({ threats: [PORTAL, FORM, TREASURY, VENDOR, EVIL], keys: { organizationKeys: { [KEY]: 'acme' }, userKeys: {} }, now: () => new Date(NOW) });
    dnsPort = await freePort();
    const resolverPort = await freePort();
    daemon = new CliProcess([], mirrorEnvFor(KEY, NOW)(standin, join(dir, 'mirror.db'), {
      THREAT_MIRROR_INITIAL_DAYS: '3',
      // One run at start, none after it: whatever changes later is the allowlist's doing.
      THREAT_MIRROR_SCHEDULE: '0 0 1 1 *',
      THREAT_MIRROR_HTTP_PORT: '0',
      THREAT_MIRROR_DNS_PORT: String(dnsPort),
      THREAT_MIRROR_DNS_NOTIFY: `127.0.0.1:${resolverPort}`,
      THREAT_MIRROR_EXPORTS: `rpz=${files().rpz},hosts=${files().hosts},csv=${files().csv}`,
      THREAT_MIRROR_ALLOWLIST: allowlist,
      LOG_LEVEL: 'info',
    }));
    httpPort = await servingPort(daemon);
    await daemon.waitForLog((line) => line.msg === 'export written' && line.path === files().csv);
    // Another feed blocks the customer's portal (the false positive to override) and a host of its own.
    const feed = join(dir, 'feed.rpz');
    writeFileSync(feed, '$TTL 300\n@ IN SOA localhost. hostmaster.localhost. 1 600 120 864000 300\n@ IN NS localhost.\ncustomer-portal.com CNAME .\n*.customer-portal.com CNAME .\nfeed-only.com CNAME .\n');
    authority = await startAuthority({ 'customer-portal.com': '192.0.2.80', 'www.customer-portal.com': '192.0.2.81', 'unlisted.com': '192.0.2.83' });
    const stubs = { names: ['customer-portal.com', 'still-evil.com', 'feed-only.com', 'unlisted.com'], port: authority.port };
    resolver = await startPolicyResolver(join(dir, 'unbound'), [{ name: ZONE, primaryPort: dnsPort }, { name: 'feed.example', file: feed }], stubs, resolverPort);
    await until('Unbound holds our zone', () => resolver.blocks('still-evil.com'), 20_000);
  }, 60_000);

  afterAll(async () => {
    await resolver?.stop();
    await authority?.close();
    daemon?.kill('SIGTERM');
    await daemon?.exited;
    await standin?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies a file written in place within 5 s everywhere: /v1/lookup, the export files, the zone (IXFR too), Unbound with ours listed first', async () => {
    const data = serviceData();
    // At start, the writer mirrored the file as it was: no entry yet.
    expect(sqlReaders()).toEqual({ values: [], allowed: [] });
    expect((await runCli(['status'], { THREAT_MIRROR_DB: join(dir, 'mirror.db') })).stdout).toContain(`\nallowlist: 0 entries from ${allowlist}, applied `);
    expect(await resolver.blocks('customer-portal.com')).toBe(true); // the other feed's false positive
    expect(await resolver.resolves('unlisted.com', '192.0.2.83')).toBe(true);
    const before = axfr();
    writeFileSync(allowlist, '# local exceptions\ncustomer-portal.com # ticket 4411\neip155:1:0xabc0000000000000000000000000000000000001 # treasury\nBilling@Vendor-Bank.com # invoices\n');
    const ms = await followed(true, false);
    expect(ms).toBeLessThan(5_000);
    // /v1/lookup names each allowed threat, with the line and its reason: a URL, its host's subdomain, an address, an e-mail.
    const values = ['https://customer-portal.com/', 'https://www.customer-portal.com/a', 'eip155:1:0xABC0000000000000000000000000000000000001', 'billing@vendor-bank.com'];
    const response = await fetch(`http://127.0.0.1:${httpPort}/v1/lookup`, { method: 'POST', body: JSON.stringify({ values }) });
    const { results } = (await response.json()) as { results: Array<{ blocked: boolean; allowed?: true; matches: Array<{ id: number; allowed?: true; allowed_by?: { line: number; reason: string } }> }> };
    expect(results.map((result) => [result.blocked, result.allowed, result.matches.map((match) => [match.id, match.allowed, match.allowed_by?.line, match.allowed_by?.reason])])).toEqual([
      [false, true, [[PORTAL.id, true, 2, 'ticket 4411']]],
      [false, true, [[PORTAL.id, true, 2, 'ticket 4411']]],
      [false, true, [[TREASURY.id, true, 3, 'treasury']]],
      [false, true, [[VENDOR.id, true, 4, 'invoices']]],
    ]);
    // SQL readers: the writer thread replaced the table, and the view follows it.
    expect(sqlReaders()).toEqual({ values: ['customer-portal.com', 'eip155:1:0xabc0000000000000000000000000000000000001', 'Billing@Vendor-Bank.com'], allowed: [PORTAL.id, TREASURY.id, VENDOR.id] });
    expect((await runCli(['status'], { THREAT_MIRROR_DB: join(dir, 'mirror.db') })).stdout).toContain(`\nallowlist: 3 entries from ${allowlist}, applied `);
    expect(await resolver.resolves('www.customer-portal.com', '192.0.2.81')).toBe(true);
    expect(await resolver.blocks('still-evil.com')).toBe(true);
    expect(await resolver.blocks('feed-only.com')).toBe(true);
    // The HTTP feeds: the rpz feed is the zone (passthru included); the others leave allowed threats out.
    const feed = async (format: string): Promise<string> => (await fetch(`http://127.0.0.1:${httpPort}/v1/exports/${format}`)).text();
    expect(await feed('rpz')).toContain('\ncustomer-portal.com CNAME rpz-passthru.\n*.customer-portal.com CNAME rpz-passthru.\n');
    expect((await feed('csv')).split('\r\n').slice(1, -1).map((row) => Number(row.split(',')[0]))).toEqual([FORM.id, EVIL.id]);
    expect(await feed('jsonl')).not.toContain('vendor-bank');
    // The zone moved one step: an IXFR from the old serial, applied to the old zone, is the new zone.
    const after = axfr();
    expect(serialOf(after)).toBeGreaterThan(serialOf(before));
    expect(applyIxfr(before, ixfrRecords(dig(['@127.0.0.1', '-p', String(dnsPort), ZONE, `IXFR=${serialOf(before)}`]).text))).toEqual(after);
    expect(after).not.toContain(`customer-portal.com.${ZONE}. 300 in cname .`);
    // The file as the CLI exports it with the same list (the daemon's zone carries its own serial).
    const exported = await runCli(['export', '--format', 'rpz'], { THREAT_MIRROR_DB: join(dir, 'mirror.db'), THREAT_MIRROR_ALLOWLIST: allowlist });
    expect(withoutSoa(readFileSync(files().rpz, 'utf8'))).toBe(withoutSoa(exported.stdout));
    const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
    expect(metrics).toContain(`threat_mirror_allowlist_entries{file="${allowlist}"} 3`);
    expect(metrics).toContain(`threat_mirror_allowlist_problem{file="${allowlist}"} 0`);
    expect(Number(new RegExp(`^threat_mirror_allowlist_last_applied_timestamp_seconds\\{file="${allowlist}"\\} (\\S+)$`, 'm').exec(metrics)?.[1])).toBeGreaterThan(Date.parse(NOW) / 1000);
    expect(promtoolCheckMetrics(metrics)).toEqual({ ok: true, output: '' });
    expect(serviceData()).toBe(data);
  }, 30_000);

  it('applies a file renamed over it (a new inode) within 5 s: an entry removed is blocked again, one added allowed', async () => {
    const data = serviceData();
    const next = join(dir, '.allow.txt.new');
    writeFileSync(next, 'https://shared-docs.com/forms/abc # the supplier form\n0xabc0000000000000000000000000000000000001\n');
    renameSync(next, allowlist);
    expect(await followed(false, true)).toBeLessThan(5_000);
    expect(await blocked('eip155:1:0xabc0000000000000000000000000000000000001')).toBe(false);
    expect(await blocked('billing@vendor-bank.com')).toBe(true);
    expect(sqlReaders()).toEqual({ values: ['https://shared-docs.com/forms/abc', '0xabc0000000000000000000000000000000000001'], allowed: [FORM.id, TREASURY.id] });
    expect(serviceData()).toBe(data);
  }, 30_000);

  it('keeps the last good list while the file is malformed, missing or unreadable, and says so in the log, /readyz and /metrics', async () => {
    const readyz = async (): Promise<{ status: number; reasons: string[] }> => {
      const response = await fetch(`http://127.0.0.1:${httpPort}/readyz`);
      return { status: response.status, reasons: ((await response.json()) as { reasons: string[] }).reasons };
    };
    expect((await readyz()).status).toBe(200);
    writeFileSync(allowlist, 'customer-portal.com\n||still-evil.com^\n');
    await until('/readyz names the bad line', async () => (await readyz()).status === 503, 5_000);
    expect((await readyz()).reasons).toEqual([expect.stringMatching(new RegExp(`^THREAT_MIRROR_ALLOWLIST: ${allowlist} line 2: "\\|\\|still-evil\\.com\\^" is AdGuard syntax.*the previous list of 2 entries, applied at .*, is still in use$`))]);
    expect(daemon.logs.some((line) => line.level === 50 && String(line.msg).includes(`${allowlist} line 2`))).toBe(true);
    const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
    expect(metrics).toContain(`threat_mirror_allowlist_problem{file="${allowlist}"} 1`);
    expect(metrics).toMatch(new RegExp(`threat_mirror_allowlist_failures_total\\{file="${allowlist}"\\} [1-9]`));
    // The last good list answers meanwhile: the form allowed, the portal (in the bad file) not.
    expect(await blocked('https://shared-docs.com/forms/abc')).toBe(false);
    expect(await blocked('https://customer-portal.com/')).toBe(true);
    const lastGood = { values: ['https://shared-docs.com/forms/abc', '0xabc0000000000000000000000000000000000001'], allowed: [FORM.id, TREASURY.id] };
    expect(sqlReaders()).toEqual(lastGood);

    rmSync(allowlist);
    await until('/readyz says the file is gone', async () => (await readyz()).reasons.some((reason) => reason.includes('cannot read it: ENOENT')), 5_000);
    expect(await blocked('https://shared-docs.com/forms/abc')).toBe(false);
    expect(sqlReaders()).toEqual(lastGood);

    // Back as it was: ready again, nothing re-applied.
    writeFileSync(allowlist, 'https://shared-docs.com/forms/abc # the supplier form\n0xabc0000000000000000000000000000000000001\n');
    await until('ready again', async () => (await readyz()).status === 200, 5_000);
  }, 30_000);

  it('accepts a file really emptied (nothing allowed any more), and follows a ConfigMap-style swap of its ..data link', async () => {
    writeFileSync(allowlist, '');
    expect(await followed(false, false)).toBeLessThan(5_000);
    expect(sqlReaders()).toEqual({ values: [], allowed: [] });
    // As Kubernetes mounts a ConfigMap: the file is a link through ..data, swapped in one rename.
    const mount = join(dir, 'configmap');
    mkdirSync(join(mount, '..2026_03_15_1'), { recursive: true });
    writeFileSync(join(mount, '..2026_03_15_1', 'allow.txt'), '# empty for now\n');
    symlinkSync('..2026_03_15_1', join(mount, '..data'));
    symlinkSync('..data/allow.txt', join(mount, 'allow.txt'));
    rmSync(allowlist);
    symlinkSync(join(mount, 'allow.txt'), allowlist);
    mkdirSync(join(mount, '..2026_03_15_2'));
    writeFileSync(join(mount, '..2026_03_15_2', 'allow.txt'), 'customer-portal.com\nhttps://shared-docs.com/forms/abc\n');
    symlinkSync('..2026_03_15_2', join(mount, '..data_tmp'));
    renameSync(join(mount, '..data_tmp'), join(mount, '..data'));
    expect(await followed(true, true)).toBeLessThan(5_000);
    expect(sqlReaders()).toEqual({ values: ['customer-portal.com', 'https://shared-docs.com/forms/abc'], allowed: [PORTAL.id, FORM.id] });
  }, 30_000);

  it('the mirror stays exact against the stand-in: what the service lists, nothing more or less', () => {
    const mirrored = withDb(join(dir, 'mirror.db'), (db) => db.prepare("SELECT t.id FROM threats t JOIN organization_threats o ON o.threat_id = t.id WHERE o.organization = 'acme' AND o.removed_at IS NULL ORDER BY t.id").pluck().all());
    expect(mirrored).toEqual([PORTAL.id, FORM.id, TREASURY.id, VENDOR.id, EVIL.id]);
  });
});

function withoutSoa(zone: string): string {
  return zone.replace(/^@ IN SOA .*$/m, '@ IN SOA');
}
