// `threat-mirror export`: every format from a mirror a real sync wrote from the stand-in, with
// hostile contents; host formats judged by the rules, the RPZ by BIND and Unbound themselves.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { domainToASCII } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats, type Standin, type StandinThreat, startStandin } from '../src/standin/index.js';
import { runCli } from './support/cli.js';
import { namedCheckzone } from './support/dns-tools.js';
import { skipWithout } from './support/judges.js';
import { type Authority, type PolicyResolver, startAuthority, startPolicyResolver } from './support/policy-zones.js';
import { scalar, withDb } from './support/mirror-db.js';
import { mirrorEnvFor } from './support/service.js';
import { tempDir } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const ACME_KEY = 'acme-export-key';
const GLOBEX_KEY = 'globex-export-key';
const LONG_HOST = `${['a', 'b', 'c'].map((letter) => letter.repeat(60)).join('.')}.long-host.com`; // 197: a DNS name, too long for a zone
const TOO_LONG_LABEL = `${'x'.repeat(64)}.com`;

let nextId = 5_000_000;
function threat(content: string, type = 'URL', organization = 'acme', day = TODAY): StandinThreat {
  nextId += 1;
  return { id: nextId, content, type, blockedAt: `${day}T${String(nextId % 24).padStart(2, '0')}:15:00.000Z`, organization };
}

/** Contents with the host entry each should give (null: none), and why. */
const SPECIFIC: Array<[StandinThreat, string | null]> = [
  [threat('https://Evil-Login.Com/'), 'evil-login.com'],
  [threat('HTTP://evil-login.com:80/./#top', 'URL', 'globex'), 'evil-login.com'],
  [threat('https://sub.evil-login.com/'), 'sub.evil-login.com'],
  [threat('https://пример-банк.com/', 'PAGE'), domainToASCII('пример-банк.com')],
  [threat('wallet-drainer.com'), 'wallet-drainer.com'],
  [threat('https://xn--80ak6aa92e.com/'), 'xn--80ak6aa92e.com'],
  [threat(`https://${LONG_HOST}/`, 'URL', 'globex'), LONG_HOST],
  [threat(`https://${TOO_LONG_LABEL}/`), null],
  [threat('https://1.2.3.4/'), null],
  [threat('https://github.io/'), null],
  // Issue 32 item 1: names a resolver reads as something other than a plain domain.
  [threat('https://undelegated-host.example/'), null],
  [threat('1.0.0.0.0.rpz-client-ip'), null],
  [threat('http://8.0.0.0.10.rpz-ip/'), null],
  [threat('ns.evil-login.com.rpz-nsdname', 'PAGE'), null],
  [threat('https://docs-host.com/forms/abc'), null],
  [threat("https://sql-host.com/'; DROP TABLE threats; --"), null],
  [threat('https://quote-host.com/?q="x"&r=\'y\''), null],
  [threat('"quoted" \'single\' `back` \\backslash\\'), null],
  [threat("Robert'); DELETE FROM organization_threats WHERE ('1'='1", 'PAGE'), null],
  [threat('Support@Evil-Login.Com', 'EMAIL'), null],
  [threat('eip155:1:0xAbC0000000000000000000000000000000000001', 'ADDRESS'), null],
  [threat("https://social.example.com/@o'brien", 'PLATFORM_02'), null],
];
const REMOVED = threat('https://removed-host.com/');
const EXPECTED_HOSTS = [...new Set(SPECIFIC.map(([, host]) => host).filter((host): host is string => host !== null))].sort();
const GENERATED = generateThreats({ seed: 18, organizations: ['acme', 'globex'], count: 400, fromDay: addDays(TODAY, -3), toDay: TODAY, hostile: true });

/**
 * The hosts the stand-in's generated whole-host blocks (a bare domain or `https://host/`) should
 * give, by the WHATWG URL parser rather than the exporter's own canonicalizer.
 */
function generatedHosts(organization?: string): string[] {
  const hosts = GENERATED.filter((item) => (item.type === 'URL' || item.type === 'PAGE') && (organization === undefined || item.organization === organization))
    .filter((item) => /^(?:https:\/\/)?[^/?#\s%'"\\]+\.[^/?#\s%'"\\]+\/?$/.test(item.content))
    .map((item) => new URL(item.content.startsWith('https://') ? item.content : `http://${item.content}`))
    .filter((url) => url.pathname === '/' && url.search === '')
    .map((url) => url.hostname);
  return [...new Set(hosts)];
}

let standin: Standin | undefined;
afterEach(async () => {
  await standin?.close();
  standin = undefined;
});

/** One mirror for the tests that only read it: a sync per test would triple the file's run time. */
let sharedDir: string;
let shared: { dbPath: string; env: Record<string, string> };
beforeAll(async () => {
  sharedDir = mkdtempSync(join(tmpdir(), 'threat-mirror-export-'));
  const { dbPath, env } = await mirror(sharedDir);
  await standin?.close();
  standin = undefined;
  shared = { dbPath, env };
});
afterAll(() => rmSync(sharedDir, { recursive: true, force: true }));

async function mirror(dir: string): Promise<{ service: Standin; dbPath: string; env: Record<string, string> }> {
  standin = await startStandin({
    threats: [...GENERATED, ...SPECIFIC.map(([item]) => item), REMOVED],
    keys: { organizationKeys: { [ACME_KEY]: 'acme', [GLOBEX_KEY]: 'globex' }, userKeys: {} },
    now: () => new Date(NOW),
  });
  const dbPath = join(dir, 'mirror.db');
  const env = mirrorEnvFor({ acme: ACME_KEY, globex: GLOBEX_KEY }, NOW, { THREAT_MIRROR_INITIAL_DAYS: '5', LOG_LEVEL: 'warn' })(standin, dbPath);
  const synced = await runCli(['--once'], env);
  expect(synced.code, synced.stderr).toBe(0);
  return { service: standin, dbPath, env };
}

async function exportText(env: Record<string, string>, ...args: string[]): Promise<{ text: string; summary: string }> {
  const result = await runCli(['export', ...args], env);
  expect(result.code, result.stderr).toBe(0);
  return { text: result.stdout, summary: result.stderr };
}

const lines = (text: string, comment: string): string[] => text.split('\n').filter((line) => line !== '' && !line.startsWith(comment));

describe('export of host formats', () => {
  it('lists exactly the hosts blocked as a whole, once each, sorted, IDNs punycoded, in every host format', async () => {
        const { env } = shared;
    const domains = await exportText(env, '--format', 'domains');
    // The generated data blocks whole hosts too (lookalike domains and their subdomains, IDNs).
    expect(generatedHosts().length).toBeGreaterThan(20);
    expect(generatedHosts().some((host) => host.startsWith('xn--'))).toBe(true);
    expect(lines(domains.text, '#')).toEqual([...new Set([...EXPECTED_HOSTS, 'removed-host.com', ...generatedHosts()])].sort());
    expect(domains.text).not.toMatch(/docs-host|sql-host|quote-host|DROP|github\.io|1\.2\.3\.4|xxxxxxxxxxxx/);
    // Left out and counted: in the file's header and on stderr.
    const pathLevel = Number(/left out: (\d+) path-level/.exec(domains.text)?.[1]);
    expect(pathLevel).toBeGreaterThanOrEqual(3);
    expect(domains.summary).toContain(`left out: ${pathLevel} path-level URL/PAGE blocks`);
    expect(domains.summary).toMatch(/1 IP addresses, 3 with an rpz- label \(RPZ triggers, not names\), [1-9]\d* outside a delegated top-level domain, 1 public suffixes/);
    expect(lines(domains.text, '#').filter((host) => host.includes('rpz-') || host.endsWith('.example'))).toEqual([]);

    const hostsFile = await exportText(env, '--format', 'hosts');
    expect(lines(hostsFile.text, '#')).toEqual(lines(domains.text, '#').map((host) => `0.0.0.0 ${host}`));
    const adguard = await exportText(env, '--format', 'adguard');
    expect(lines(adguard.text, '!')).toEqual(lines(domains.text, '#').map((host) => `||${host}^`));
    const suricata = await exportText(env, '--format', 'suricata');
    expect(lines(suricata.text, '#').map((line) => Buffer.from(line, 'base64').toString('utf8'))).toEqual(lines(domains.text, '#'));
    expect(suricata.text).toMatch(/^[A-Za-z0-9+/=\n]+$/);
    const rules = await exportText(env, '--format', 'suricata', '--rules');
    expect(rules.text).toMatch(/dns\.query; dataset:isset,threat-mirror-hosts,type string,load threat-mirror-hosts\.lst;/);
    expect(rules.text).toMatch(/tls\.sni; dataset:isset,threat-mirror-hosts/);

    const metamask = JSON.parse((await exportText(env, '--format', 'metamask')).text) as Record<string, unknown>;
    expect(Object.keys(metamask)).toEqual(['version', 'tolerance', 'fuzzylist', 'whitelist', 'blacklist']);
    // sub.evil-login.com (and any generated subdomain of a listed lookalike) is covered by its listed parent.
    const listed = new Set(lines(domains.text, '#'));
    const withListedParent = (host: string): boolean => host.split('.').some((_label, index, labels) => index > 0 && listed.has(labels.slice(index).join('.')));
    expect(withListedParent('sub.evil-login.com')).toBe(true);
    expect([...(metamask.blacklist as string[])].sort()).toEqual([...listed].filter((host) => !withListedParent(host)));

    // --org: only that organization's threats.
    const globex = await exportText(env, '--format', 'domains', '--org', 'globex');
    expect(lines(globex.text, '#')).toEqual([...new Set(['evil-login.com', LONG_HOST, ...generatedHosts('globex')])].sort());
    expect(globex.text).toContain('# organizations: globex');
  });

  it('gives byte-identical output for the same mirror, and leaves an --out file untouched when nothing changed', async () => {
    const dir = tempDir();
    const { env } = shared;
    for (const format of ['domains', 'rpz', 'metamask', 'stix', 'csv', 'jsonl']) {
      const first = await exportText(env, '--format', format);
      const second = await exportText(env, '--format', format);
      expect(second.text, format).toBe(first.text);
    }
    const out = join(dir, 'exports', 'threats.rpz');
    const written = await runCli(['export', '--format', 'rpz', '--out', out], env);
    expect(written.stderr).toMatch(/written to/);
    const before = statSync(out, { bigint: true });
    const again = await runCli(['export', '--format', 'rpz', '--out', out], env);
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(/unchanged:/);
    const after = statSync(out, { bigint: true });
    expect([after.mtimeNs, after.ino]).toEqual([before.mtimeNs, before.ino]);
    expect(readFileSync(out, 'utf8')).toBe((await exportText(env, '--format', 'rpz')).text);
  });

  it('never exports a removed threat, and the zone serial grows with the change', async () => {
    const dir = tempDir();
    const { service, env, dbPath } = await mirror(dir);
    const out = join(dir, 'threats.rpz');
    expect((await runCli(['export', '--format', 'rpz', '--out', out], env)).code).toBe(0);
    const serialBefore = Number(/SOA \S+ \S+ (\d+)/.exec(readFileSync(out, 'utf8'))?.[1]);
    expect(readFileSync(out, 'utf8')).toContain('\nremoved-host.com CNAME .\n');

    service.removeThreats([REMOVED.id]);
    expect((await runCli(['--once'], env)).code).toBe(0);
    expect(scalar(dbPath, 'SELECT count(*) FROM organization_threats WHERE threat_id = ? AND removed_at IS NOT NULL', REMOVED.id)).toBe(1);
    expect((await runCli(['export', '--format', 'rpz', '--out', out], env)).stderr).toMatch(/written to/);
    const zone = readFileSync(out, 'utf8');
    expect(zone).not.toContain('removed-host');
    expect(Number(/SOA \S+ \S+ (\d+)/.exec(zone)?.[1])).toBeGreaterThan(serialBefore);
    for (const format of ['domains', 'stix', 'csv', 'jsonl']) {
      expect((await exportText(env, '--format', format)).text, format).not.toContain('removed-host');
    }
  });

  it('answers bad arguments with exit 2 naming the flag', async () => {
    const dir = tempDir();
    const env = { THREAT_MIRROR_DB: join(dir, 'none.db') };
    expect((await runCli(['export'], env)).stderr).toMatch(/export needs --format/);
    expect((await runCli(['export', '--format', 'bind'], env)).stderr).toMatch(/--format: "bind" is not a format/);
    expect((await runCli(['export', '--format', 'rpz', '--rules'], env)).code).toBe(2);
    const missing = await runCli(['export', '--format', 'rpz'], env);
    expect([missing.code, missing.stderr]).toEqual([2, expect.stringMatching(/THREAT_MIRROR_DB: no database/)]);
  });
});

describe('the RPZ file in real DNS software', () => {
  let resolver: PolicyResolver | undefined;
  let authority: Authority | undefined;
  afterEach(async () => {
    await resolver?.stop();
    await authority?.close();
    resolver = undefined;
    authority = undefined;
  });

  it.skipIf(skipWithout(['named-checkzone']))('passes named-checkzone', async () => {
    const dir = tempDir();
    const { env } = shared;
    const zoneFile = join(dir, 'threats.rpz');
    writeFileSync(zoneFile, (await exportText(env, '--format', 'rpz')).text);
    // The longest zone name the file leaves room for (63 characters).
    const zone = `${'z'.repeat(50)}.threat-mirror`;
    const checked = namedCheckzone(zone, zoneFile);
    expect(checked.output).toMatch(/OK/);
    expect(checked.status, checked.output).toBe(0);
    expect(checked.output).toMatch(new RegExp(`loaded serial \\d+`));
  });

  it.skipIf(skipWithout(['unbound', 'dig']))('makes Unbound block a blocked host and its subdomains by the policy, and resolve the others', async () => {
    const dir = tempDir();
    const { env } = shared;
    const zoneFile = join(dir, 'threats.rpz');
    writeFileSync(zoneFile, (await exportText(env, '--format', 'rpz')).text);
    const blocked = ['evil-login.com', 'deep.sub.evil-login.com', 'xn--80ak6aa92e.com', 'www.wallet-drainer.com'];
    // Every name is served by an authority of the test's own: NXDOMAIN without RA can only be the policy's.
    const names = [...blocked, 'docs-host.com'];
    authority = await startAuthority(Object.fromEntries(names.map((name) => [name, '192.0.2.10'])));
    resolver = await startPolicyResolver(join(dir, 'unbound'), [{ name: 'rpz.threat-mirror', file: zoneFile }], { names, port: authority.port });
    for (const name of blocked) expect(await resolver.blocks(name), name).toBe(true);
    // A path-level block's host is not in the zone: Unbound resolves it.
    expect(await resolver.resolves('docs-host.com', '192.0.2.10')).toBe(true);
  });
});

describe('export of record formats', () => {
  it('writes a STIX 2.1 bundle with every required property, deterministic ids and valid_from = blocked_at', async () => {
        const { env, dbPath } = shared;
    const { text, summary } = await exportText(env, '--format', 'stix');
    const bundle = JSON.parse(text) as { type: string; id: string; objects: Array<Record<string, unknown>> };
    const uuid = '[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';
    expect(bundle.type).toBe('bundle');
    expect(bundle.id).toMatch(new RegExp(`^bundle--${uuid}$`));
    const timestamp = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
    const ids = new Set<string>();
    const current = withDb(dbPath, (db) => db.prepare('SELECT DISTINCT t.id, t.content, t.type, t.blocked_at FROM current_threats t').all() as Array<{ id: number; content: string; type: string; blocked_at: string }>);
    const byId = new Map(current.map((row) => [String(row.id), row]));
    for (const object of bundle.objects) {
      for (const property of ['type', 'spec_version', 'id', 'created', 'modified', 'pattern', 'pattern_type', 'valid_from']) {
        expect(object, property).toHaveProperty(property);
      }
      expect(object.type).toBe('indicator');
      expect(object.spec_version).toBe('2.1');
      expect(object.pattern_type).toBe('stix');
      expect(object.id).toMatch(new RegExp(`^indicator--${uuid}$`));
      for (const property of ['created', 'modified', 'valid_from']) expect(object[property]).toMatch(timestamp);
      expect(object.modified as string >= (object.created as string)).toBe(true);
      ids.add(object.id as string);
      const source = byId.get((object.external_references as Array<{ external_id: string }>)[0]?.external_id ?? '');
      expect(source).toBeDefined();
      expect(object.valid_from).toBe(new Date(source?.blocked_at ?? '').toISOString());
      expect(object.pattern).toMatch(/^\[(url|domain-name|email-addr):value = '(?:[^'\\]|\\'|\\\\)*'\]$/);
    }
    expect(ids.size).toBe(bundle.objects.length);
    const patterns = bundle.objects.map((object) => object.pattern);
    expect(patterns).toContain("[url:value = 'https://sql-host.com/\\'; DROP TABLE threats; --']");
    expect(patterns).toContain("[domain-name:value = 'wallet-drainer.com']");
    expect(patterns).toContain("[email-addr:value = 'support@evil-login.com']");
    expect(text).not.toContain('0xAbC0000000000000000000000000000000000001');
    expect(summary).toMatch(/left out \(no STIX pattern\): .*\d+ ADDRESS/);
    // The same threat keeps its id in a later export.
    const again = JSON.parse((await exportText(env, '--format', 'stix')).text) as typeof bundle;
    expect(again.objects.map((object) => object.id)).toEqual(bundle.objects.map((object) => object.id));
  });

  it('writes every current threat to CSV and JSONL with exact contents, hostile ones included', async () => {
        const { env, dbPath } = shared;
    const want = withDb(dbPath, (db) =>
      db.prepare("SELECT id, type, content, blocked_at, group_concat(organization, ';') AS organizations FROM (SELECT * FROM current_threats ORDER BY organization) GROUP BY id ORDER BY id").all(),
    ) as Array<{ id: number; type: string; content: string; blocked_at: string; organizations: string }>;
    expect(want.some((row) => row.content.includes('\n') || row.content.includes('"'))).toBe(true);

    const csv = parseCsv((await exportText(env, '--format', 'csv')).text);
    const [header, ...rows] = csv;
    expect(header?.slice(0, 5)).toEqual(['id', 'type', 'content', 'blocked_at', 'organizations']);
    expect(rows.map((row) => ({ id: Number(row[0]), type: row[1], content: row[2], blocked_at: row[3], organizations: row[4] }))).toEqual(want);

    const jsonl = (await exportText(env, '--format', 'jsonl')).text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(jsonl.map((row) => ({ id: row.id, type: row.type, content: row.content, blocked_at: row.blocked_at, organizations: (row.organizations as string[]).join(';') }))).toEqual(want);
  });
});

/** RFC 4180, strictly: fails on anything malformed rather than guessing. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let index = 0;
  while (index < text.length) {
    let field = '';
    if (text[index] === '"') {
      index += 1;
      for (;;) {
        const quote = text.indexOf('"', index);
        if (quote < 0) throw new Error('unterminated quoted field');
        field += text.slice(index, quote);
        index = quote + 1;
        if (text[index] === '"') {
          field += '"';
          index += 1;
        } else break;
      }
    } else {
      const end = text.slice(index).search(/[,\r]/);
      field = end < 0 ? text.slice(index) : text.slice(index, index + end);
      if (field.includes('"') || field.includes('\n')) throw new Error(`bad unquoted field: ${field}`);
      index += field.length;
    }
    row.push(field);
    if (text[index] === ',') index += 1;
    else if (text.startsWith('\r\n', index)) {
      rows.push(row);
      row = [];
      index += 2;
    } else if (index < text.length) throw new Error(`unexpected character at ${index}`);
  }
  if (row.length > 0) rows.push(row);
  return rows;
}
