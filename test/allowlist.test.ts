// Issue 31: THREAT_MIRROR_ALLOWLIST in the read commands. `lookup` names an allowed threat but does
// not count it as blocked; every export format leaves allowed threats out and counts them; the RPZ
// lets allowed hosts through (rpz-passthru), judged by named-checkzone and by a real Unbound that
// consults it before another feed's zone.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Standin, StandinThreat } from '../src/standin/index.js';
import { runCli } from './support/cli.js';
import { namedCheckzone } from './support/dns-tools.js';
import { skipWithout } from './support/judges.js';
import { startAuthority, startPolicyResolver } from './support/policy-zones.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { afterThisTest } from './support/cleanup.js';
import { withDb } from './support/mirror-db.js';
import { tempDir } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEY = 'acme-allowlist-key';
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: '3' });

let nextId = 9_100_000;
function threat(content: string, type = 'URL'): StandinThreat {
  nextId += 1;
  return { id: nextId, content, type, blockedAt: `${TODAY}T08:${String(nextId % 60).padStart(2, '0')}:00.000Z`, organization: 'acme' };
}

const PORTAL = threat('https://customer-portal.com/');
const PORTAL_LOGIN = threat('https://eu.customer-portal.com/login', 'PAGE');
const FORM = threat('https://shared-docs.com/forms/abc');
const OTHER_FORM = threat('https://shared-docs.com/forms/other');
const TREASURY = threat('eip155:1:0xAbC0000000000000000000000000000000000001', 'ADDRESS');
const VENDOR = threat('billing@vendor-bank.com', 'EMAIL');
const EVIL = threat('https://still-evil.com/');
const THREATS = [PORTAL, PORTAL_LOGIN, FORM, OTHER_FORM, TREASURY, VENDOR, EVIL];

const ALLOWLIST = `# local exceptions (issue 31)
customer-portal.com          # ticket 4411: the customer's own portal
https://shared-docs.com/forms/abc   # our supplier's order form
0xabc0000000000000000000000000000000000001  # treasury wallet
Billing@Vendor-Bank.com # vendor invoices
`;

interface Match {
  id: number;
  content: string;
  allowed?: true;
  allowed_by?: { entry: string; kind: string; line: number; reason: string | null };
}
interface Result {
  value: string;
  blocked: boolean;
  allowed?: true;
  matches: Match[];
}

async function mirrored(): Promise<{ service: Standin; dir: string; dbPath: string; allowlist: string }> {
  const service = await serveThreats(KEY, NOW, THREATS);
  const dir = tempDir();
  const dbPath = join(dir, 'mirror.db');
  const allowlist = join(dir, 'allow.txt');
  writeFileSync(allowlist, ALLOWLIST);
  const once = await runCli(['--once'], env(service, dbPath));
  expect(once.code, once.stderr).toBe(0);
  return { service, dir, dbPath, allowlist };
}

async function lookup(dbPath: string, allowlist: string, value: string): Promise<{ code: number | null; result: Result; text: string }> {
  const json = await runCli(['lookup', '--json', value], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_ALLOWLIST: allowlist });
  const text = await runCli(['lookup', value], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_ALLOWLIST: allowlist });
  expect(text.code).toBe(json.code);
  return { code: json.code, result: (JSON.parse(json.stdout) as { results: Result[] }).results[0] as Result, text: text.stdout };
}

describe('THREAT_MIRROR_ALLOWLIST in lookup', () => {
  it('an allowed URL, host (and its subdomain), address and e-mail are not blocked, named with allowed: true and the reason; removing the line restores them', async () => {
    const { dbPath, allowlist } = await mirrored();
    const portal = "ticket 4411: the customer's own portal";
    const cases: Array<[value: string, ids: number[], line: number, reason: string]> = [
      ['https://customer-portal.com/', [PORTAL.id], 2, portal],
      // The subdomain's page: blocked by its own threat and by the host's, both allowed by the host's line.
      ['https://eu.customer-portal.com/login?next=/', [PORTAL.id, PORTAL_LOGIN.id], 2, portal],
      ['https://shared-docs.com/forms/abc/step2', [FORM.id], 3, "our supplier's order form"],
      ['eip155:1:0xABC0000000000000000000000000000000000001', [TREASURY.id], 4, 'treasury wallet'],
      ['billing@vendor-bank.com', [VENDOR.id], 5, 'vendor invoices'],
    ];
    for (const [value, ids, line, reason] of cases) {
      const { code, result, text } = await lookup(dbPath, allowlist, value);
      expect(code, value).toBe(1);
      expect(result.blocked, value).toBe(false);
      expect(result.allowed, value).toBe(true);
      expect(result.matches.map((match) => match.id), value).toEqual(ids);
      for (const match of result.matches) expect(match, value).toMatchObject({ allowed: true, allowed_by: { line, reason } });
      expect(text, value).toContain(`${value}: not blocked: allowed locally (${ids.length} ${ids.length === 1 ? 'match' : 'matches'})`);
      expect(text, value).toContain(`allowed by THREAT_MIRROR_ALLOWLIST line ${line}`);
    }
    // What the list does not cover stays blocked: a sibling form, and another host.
    for (const value of ['https://shared-docs.com/forms/other', 'https://still-evil.com/x']) {
      const { code, result } = await lookup(dbPath, allowlist, value);
      expect(code, value).toBe(0);
      expect(result.blocked, value).toBe(true);
      expect(result.matches[0]?.allowed, value).toBeUndefined();
    }
    // Lines removed: blocked again, at the next look-up.
    writeFileSync(allowlist, '# nothing allowed any more\n');
    for (const [value, ids] of cases) {
      const { code, result } = await lookup(dbPath, allowlist, value);
      expect(code, value).toBe(0);
      expect(result.blocked, value).toBe(true);
      expect(result.matches.map((match) => [match.id, match.allowed]), value).toEqual(ids.map((id) => [id, undefined]));
      expect(result.allowed, value).toBeUndefined();
    }
  }, 60_000);

  it('a malformed line, or a file that cannot be read, exits 2 naming the file and the line', async () => {
    const { service, dbPath, allowlist } = await mirrored();
    writeFileSync(allowlist, 'customer-portal.com\n\n*.shared-docs.com # every subdomain\n');
    for (const args of [['lookup', 'https://customer-portal.com/'], ['export', '--format', 'domains']]) {
      const result = await runCli(args, { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_ALLOWLIST: allowlist });
      expect(result.code, args[0]).toBe(2);
      expect(result.stderr).toBe(`threat-mirror: THREAT_MIRROR_ALLOWLIST: ${allowlist} line 3: "*.shared-docs.com" is a wildcard: write the bare host (it covers its subdomains)\n`);
    }
    // The daemon and a one-shot sync stop before they start: nothing is synced with a list that says something else.
    for (const args of [[], ['--once']]) {
      const result = await runCli(args, { ...env(service, join(tempDir(), 'mirror.db')), THREAT_MIRROR_ALLOWLIST: allowlist, THREAT_MIRROR_HTTP_PORT: '0' });
      expect(result.code, args.join(' ') || 'daemon').toBe(2);
      expect(result.stderr).toBe(`threat-mirror: THREAT_MIRROR_ALLOWLIST: ${allowlist} line 3: "*.shared-docs.com" is a wildcard: write the bare host (it covers its subdomains)\n`);
    }
    const missing = join(tempDir(), 'no-such-file.txt');
    const result = await runCli(['lookup', 'x'], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_ALLOWLIST: missing });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`THREAT_MIRROR_ALLOWLIST: ${missing}: cannot read it: ENOENT`);
  }, 60_000);
});

describe('THREAT_MIRROR_ALLOWLIST in exports', () => {
  it('every format leaves allowed threats out and counts them ("allowed locally") in its summary and header', async () => {
    const { dbPath, allowlist } = await mirrored();
    // What each format lists, without its comment lines: with the allowlist, and without it.
    const expected: Record<string, [allowed: string[], without: string[]]> = {
      domains: [['still-evil.com'], ['customer-portal.com', 'still-evil.com']],
      hosts: [['0.0.0.0 still-evil.com'], ['0.0.0.0 customer-portal.com', '0.0.0.0 still-evil.com']],
      adguard: [['||still-evil.com^'], ['||customer-portal.com^', '||still-evil.com^']],
      suricata: [['still-evil.com'], ['customer-portal.com', 'still-evil.com']],
      metamask: [['still-evil.com'], ['customer-portal.com', 'still-evil.com']],
      rpz: [
        ['still-evil.com CNAME .', '*.still-evil.com CNAME .', 'customer-portal.com CNAME rpz-passthru.', '*.customer-portal.com CNAME rpz-passthru.'],
        ['customer-portal.com CNAME .', '*.customer-portal.com CNAME .', 'still-evil.com CNAME .', '*.still-evil.com CNAME .'],
      ],
      csv: [[OTHER_FORM, EVIL].map((kept) => String(kept.id)), THREATS.map((all) => String(all.id))],
      jsonl: [[OTHER_FORM, EVIL].map((kept) => String(kept.id)), THREATS.map((all) => String(all.id))],
      stix: [[OTHER_FORM, EVIL].map((kept) => String(kept.id)), [PORTAL, PORTAL_LOGIN, FORM, OTHER_FORM, VENDOR, EVIL].map((all) => String(all.id))],
    };
    for (const [format, [withList, withoutList]] of Object.entries(expected)) {
      const without = await runCli(['export', '--format', format], { THREAT_MIRROR_DB: dbPath });
      const result = await runCli(['export', '--format', format], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_ALLOWLIST: allowlist });
      expect(result.code, `${format}: ${result.stderr}`).toBe(0);
      expect(entriesOf(format, result.stdout), format).toEqual(withList);
      expect(entriesOf(format, without.stdout), format).toEqual(withoutList);
      expect(result.stderr, format).toContain('5 allowed locally (THREAT_MIRROR_ALLOWLIST)');
      expect(without.stderr, format).not.toContain('allowed locally');
      if (['domains', 'hosts', 'adguard', 'rpz'].includes(format)) expect(result.stdout, format).toMatch(/^[#!;] 5 threats allowed locally \(THREAT_MIRROR_ALLOWLIST\), left out$/m);
    }
    const csv = await runCli(['export', '--format', 'csv'], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_ALLOWLIST: allowlist });
    expect(csv.stderr).toBe('threat-mirror export: csv: 2 threats; 5 allowed locally (THREAT_MIRROR_ALLOWLIST)\n');
  }, 90_000);

  it.skipIf(skipWithout(['named-checkzone', 'unbound', 'dig']))(
    'the RPZ lets each allowed host through: named-checkzone accepts it, and Unbound with it listed before another feed resolves the host normally',
    async () => {
      const { dbPath, allowlist, dir } = await mirrored();
      // Also a subdomain of a host blocked whole: its passthru name must win over the parent's block.
      writeFileSync(allowlist, `${ALLOWLIST}docs.still-evil.com # a subdomain we run ourselves\n`);
      const zoneFile = join(dir, 'threats.rpz');
      const result = await runCli(['export', '--format', 'rpz', '--out', zoneFile], { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_ALLOWLIST: allowlist });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain('; 2 allowed hosts let through (rpz-passthru)');
      const zone = readFileSync(zoneFile, 'utf8');
      expect(zone).toContain('\ncustomer-portal.com CNAME rpz-passthru.\n*.customer-portal.com CNAME rpz-passthru.\n');
      expect(zone).toContain('\nstill-evil.com CNAME .\n*.still-evil.com CNAME .\n');
      expect(zone).toContain('\ndocs.still-evil.com CNAME rpz-passthru.\n*.docs.still-evil.com CNAME rpz-passthru.\n');
      const checked = namedCheckzone('rpz.threat-mirror', zoneFile);
      expect(checked.status, checked.output).toBe(0);

      // Another feed blocks the customer's portal (the false positive) and still-evil.com.
      const feed = join(dir, 'feed.rpz');
      writeFileSync(feed, `$TTL 300\n@ IN SOA localhost. hostmaster.localhost. 1 600 120 864000 300\n@ IN NS localhost.\ncustomer-portal.com CNAME .\n*.customer-portal.com CNAME .\nfeed-only.com CNAME .\n`);
      const authority = await startAuthority({
        'customer-portal.com': '192.0.2.80',
        'eu.customer-portal.com': '192.0.2.81',
        'feed-only.com': '192.0.2.82',
        'unlisted.com': '192.0.2.83',
        'docs.still-evil.com': '192.0.2.84',
        'a.docs.still-evil.com': '192.0.2.85',
      });
      afterThisTest('servers', () => authority.close());
      const stubs = { names: ['customer-portal.com', 'feed-only.com', 'unlisted.com', 'still-evil.com'], port: authority.port };
      const both = await startPolicyResolver(join(dir, 'both'), [{ name: 'rpz.threat-mirror', file: zoneFile }, { name: 'feed.example', file: feed }], stubs);
      afterThisTest('processes', () => both.stop());
      const feedAlone = await startPolicyResolver(join(dir, 'feed-alone'), [{ name: 'feed.example', file: feed }], stubs);
      afterThisTest('processes', () => feedAlone.stop());
      // The feed alone blocks the portal; ours first lets it (and its subdomain) through to the real answer.
      expect(await feedAlone.blocks('customer-portal.com')).toBe(true);
      expect(await both.resolves('customer-portal.com', '192.0.2.80')).toBe(true);
      expect(await both.resolves('eu.customer-portal.com', '192.0.2.81')).toBe(true);
      // What neither allows stays blocked, by either zone; what neither lists resolves.
      expect(await both.blocks('still-evil.com')).toBe(true);
      expect(await both.blocks('www.still-evil.com')).toBe(true);
      // Within our zone, the allowed subdomain's passthru wins over the parent's wildcard block.
      expect(await both.resolves('docs.still-evil.com', '192.0.2.84')).toBe(true);
      expect(await both.resolves('a.docs.still-evil.com', '192.0.2.85')).toBe(true);
      expect(await both.blocks('feed-only.com')).toBe(true);
      expect(await both.resolves('unlisted.com', '192.0.2.83')).toBe(true);
    },
    60_000,
  );
});

describe('THREAT_MIRROR_ALLOWLIST for SQL readers', () => {
  it('a writing command mirrors it into the table allowlist, enforced_threats leaves out what it allows, status shows it; run without it, the table is emptied', async () => {
    const { service, dbPath, allowlist } = await mirrored();
    const sql = (): { entries: unknown[]; enforced: number[]; current: number[] } =>
      withDb(dbPath, (db) => ({
        entries: db.prepare('SELECT line, value, kind, reason FROM allowlist ORDER BY line').all(),
        enforced: db.prepare('SELECT DISTINCT id FROM enforced_threats ORDER BY id').pluck().all() as number[],
        current: db.prepare('SELECT DISTINCT id FROM current_threats ORDER BY id').pluck().all() as number[],
      }));
    const everything = THREATS.map((one) => one.id).sort((a, b) => a - b);
    expect(sql()).toEqual({ entries: [], enforced: everything, current: everything });

    const once = await runCli(['--once'], { ...env(service, dbPath), THREAT_MIRROR_ALLOWLIST: allowlist });
    expect(once.code, once.stderr).toBe(0);
    expect(sql()).toEqual({
      entries: [
        { line: 2, value: 'customer-portal.com', kind: 'host', reason: "ticket 4411: the customer's own portal" },
        { line: 3, value: 'https://shared-docs.com/forms/abc', kind: 'url', reason: "our supplier's order form" },
        { line: 4, value: '0xabc0000000000000000000000000000000000001', kind: 'address', reason: 'treasury wallet' },
        { line: 5, value: 'Billing@Vendor-Bank.com', kind: 'email', reason: 'vendor invoices' },
      ],
      // What every other consumer leaves out, and nothing the service sent is gone.
      enforced: [OTHER_FORM.id, EVIL.id],
      current: everything,
    });
    const status = await runCli(['status'], { THREAT_MIRROR_DB: dbPath });
    // THREAT_MIRROR_NOW starts the clock, which then runs: applied at the writer's start, just after NOW.
    expect(status.stdout).toMatch(new RegExp(`\\nallowlist: 4 entries from ${allowlist}, applied 2026-03-15T12:00:0\\d\\.\\d{3}Z\\n`));
    const json = JSON.parse((await runCli(['status', '--json'], { THREAT_MIRROR_DB: dbPath })).stdout) as { allowlist: unknown };
    expect(json.allowlist).toEqual({ file: allowlist, entries: 4, version: createHash('sha256').update(ALLOWLIST).digest('hex'), appliedAt: expect.stringMatching(/^2026-03-15T12:00:0\d\.\d{3}Z$/) });

    // A writer without the variable: SQL readers must not go on enforcing a list nothing else honours.
    const without = await runCli(['--once'], env(service, dbPath));
    expect(without.code, without.stderr).toBe(0);
    expect(sql()).toEqual({ entries: [], enforced: everything, current: everything });
    expect((await runCli(['status'], { THREAT_MIRROR_DB: dbPath })).stdout).toContain('\nallowlist: none (THREAT_MIRROR_ALLOWLIST unset for the last writer)\n');
  }, 60_000);
});

/** A format's entries, comments left out: hosts (suricata decoded, metamask's blacklist), zone records, or threat ids. */
function entriesOf(format: string, text: string): string[] {
  const lines = text.split(/\r?\n/).filter((line) => line !== '' && !/^[#!;$@]/.test(line));
  switch (format) {
    case 'suricata':
      return lines.map((line) => Buffer.from(line, 'base64').toString());
    case 'metamask':
      return (JSON.parse(text) as { blacklist: string[] }).blacklist;
    case 'csv':
      return lines.slice(1).map((line) => line.split(',')[0] as string);
    case 'jsonl':
      return lines.map((line) => String((JSON.parse(line) as { id: number }).id));
    case 'stix':
      return (JSON.parse(text) as { objects: Array<{ external_references: Array<{ external_id: string }> }> }).objects.map((indicator) => indicator.external_references[0]?.external_id ?? '');
    default:
      return lines;
  }
}
