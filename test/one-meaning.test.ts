// Issue 37, the six cases an outside review reproduced with the built CLI against the stand-in: two
// URL readers that disagreed with each other and with the browser, and "in force" defined apart in
// each view and consumer. Each case is the review's own spelling, run as a user runs it: a sync,
// then `export` and `lookup`, judged by the files, the exit codes and named-checkzone.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StandinThreat } from '../src/standin/index.js';
import { runCli } from './support/cli.js';
import { namedCheckzone } from './support/dns-tools.js';
import { skipWithout } from './support/judges.js';
import { HOST_FORMAT_NAMES, listedHosts } from './support/host-lists.js';
import { scalar } from './support/mirror-db.js';
import { createFileBeforeMigration } from './support/older-schema.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDir } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEY = 'acme-one-meaning-key';
const mirrorEnv = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: '3' });

let nextId = 37_000_000;
function threat(content: string, type = 'URL'): StandinThreat {
  nextId += 1;
  return { id: nextId, content, type, blockedAt: `${TODAY}T09:${String(nextId % 60).padStart(2, '0')}:00.000Z`, organization: 'acme' };
}

interface Mirror {
  readonly env: Record<string, string>;
  readonly dir: string;
}

/** A mirror of `threats` after one run, and the environment read commands use (with the allowlist when given). */
async function mirrorOf(threats: readonly StandinThreat[], allowlist?: string): Promise<Mirror> {
  const service = await serveThreats(KEY, NOW, threats);
  const dir = tempDir();
  const env = mirrorEnv(service, join(dir, 'mirror.db'));
  const run = await runCli(['--once'], env);
  expect(run.code, run.stderr).toBe(0);
  if (allowlist === undefined) return { env, dir };
  writeFileSync(join(dir, 'allow.txt'), allowlist);
  return { env: { ...env, THREAT_MIRROR_ALLOWLIST: join(dir, 'allow.txt') }, dir };
}

async function exported(mirror: Mirror, format: string): Promise<string> {
  const result = await runCli(['export', '--format', format], mirror.env);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

/** The entries of a host format, comments and the RPZ's SOA/NS aside. */
function entries(text: string): string[] {
  return text.split('\n').filter((line) => line !== '' && !/^[#!;$@]/.test(line));
}

/** Whether `lookup --json` answers each value blocked, by value. */
async function blocked(mirror: Mirror, values: readonly string[]): Promise<Record<string, boolean>> {
  const result = await runCli(['lookup', '--json', ...values], mirror.env);
  expect(result.code, result.stderr).not.toBe(2);
  const document = JSON.parse(result.stdout) as { results: Array<{ value: string; blocked: boolean }> };
  return Object.fromEntries(document.results.map((entry) => [entry.value, entry.blocked]));
}

/** named-checkzone's verdict on an RPZ export (the tests that ask for it skip without it, and fail so under CI). */
function checkZone(dir: string, rpz: string): { status: number | null; output: string } {
  const file = join(dir, 'threats.rpz');
  writeFileSync(file, rpz);
  return namedCheckzone('rpz.threat-mirror', file);
}

describe('issue 37: one meaning for every answer', () => {
  it('case 1: a path-level threat is no host block, whatever its escapes or trailing Unicode spaces: no host format lists its host, lookup blocks that path only', async () => {
    const paths = [
      'https://sites.google.com/view/phish-kit/%2e%2e%2f%2e%2e%2f',
      'https://drive.google.com/\u3000',
      'https://drive.google.com/\u00a0',
      'https://drive.google.com/\ufeff',
      'https://drive.google.com/\u2028',
      'https://docs.google.com/forms/d/e/1FAIpQ/viewform%2F..%2F..%2F..',
    ];
    const mirror = await mirrorOf([...paths.map((content) => threat(content)), threat('https://real-host-block.com/')]);
    for (const format of HOST_FORMAT_NAMES) {
      expect(listedHosts(format, await exported(mirror, format)), format).toEqual(['real-host-block.com']);
    }
    const answers = await blocked(mirror, [
      'https://sites.google.com/view/my-school',
      'https://docs.google.com/forms/d/e/another-form/viewform',
      'https://drive.google.com/file/d/abc/view',
      'https://sites.google.com/view/phish-kit/%2e%2e%2f%2e%2e%2f',
      'https://drive.google.com/\u3000',
    ]);
    expect(answers).toEqual({
      'https://sites.google.com/view/my-school': false,
      'https://docs.google.com/forms/d/e/another-form/viewform': false,
      'https://drive.google.com/file/d/abc/view': false,
      'https://sites.google.com/view/phish-kit/%2e%2e%2f%2e%2e%2f': true,
      'https://drive.google.com/\u3000': true,
    });
  }, 60_000);

  it.skipIf(skipWithout(['named-checkzone']))('case 2: hostile spellings of an allowed host and an ordinary allowlist line give one record per owner: named-checkzone accepts the RPZ, no format lists the host, lookup agrees', async () => {
    const hostile = [
      'http:customer-portal.com',
      '\u0001https://customer-portal.com/',
      `https://customer-portal.com/#${'f'.repeat(5_000)}`,
      `https://${'u'.repeat(5_000)}@customer-portal.com/`,
      'bücher-portal.com',
    ];
    const mirror = await mirrorOf([...hostile.map((content) => threat(content)), threat('https://still-evil.com/')], 'customer-portal.com   # ticket 4411\nbücher-portal.com\n');
    const rpz = await exported(mirror, 'rpz');
    const verdict = checkZone(mirror.dir, rpz);
    expect(verdict.status, verdict.output).toBe(0);
    const records = entries(rpz);
    expect(records).toContain('customer-portal.com CNAME rpz-passthru.');
    expect(records).toContain('xn--bcher-portal-dlb.com CNAME rpz-passthru.');
    expect(records).toContain('still-evil.com CNAME .');
    expect(records.filter((line) => /^(\*\.)?(customer-portal|xn--bcher-portal-dlb)\.com CNAME \.$/.test(line))).toEqual([]);
    for (const format of HOST_FORMAT_NAMES) {
      const listed = listedHosts(format, await exported(mirror, format));
      expect(listed, format).toEqual(['still-evil.com']);
    }
    expect(await blocked(mirror, ['https://customer-portal.com/login', 'https://eu.customer-portal.com/', 'https://bücher-portal.com/', 'https://still-evil.com/x'])).toEqual({
      'https://customer-portal.com/login': false,
      'https://eu.customer-portal.com/': false,
      'https://bücher-portal.com/': false,
      'https://still-evil.com/x': true,
    });
    // An entry no browser can open is refused with its line, never turned into a name of the zone.
    writeFileSync(join(mirror.dir, 'allow.txt'), 'https://evil-one.com%2F..%2F/\n');
    const refused = await runCli(['export', '--format', 'rpz'], mirror.env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/allow\.txt line 1: "https:\/\/evil-one\.com%2F\.\.%2F\/"/);
  }, 90_000);

  it('case 3: a lookup reads a URL as the browser does: a scheme without slashes, a C0 control before it, tab in or after it still find the blocked host', async () => {
    const mirror = await mirrorOf([threat('https://evil-one.com/')]);
    const spellings = ['http:evil-one.com/x', 'https:evil-one.com', '\u0001https://evil-one.com/x', 'http:\t//evil-one.com/x', 'ht\ttps://evil-one.com/x', 'HTTPS:\\\\evil-one.com\\x'];
    const answers = await blocked(mirror, [...spellings, 'https://not-evil-one.com/x']);
    expect(answers).toEqual({ ...Object.fromEntries(spellings.map((value) => [value, true])), 'https://not-evil-one.com/x': false });
  }, 60_000);

  it('case 4: lookup blocks the subdomains of a host-level block at any depth, as the RPZ does', async () => {
    const mirror = await mirrorOf([threat('https://a.b.c.d.evil48.com/')]);
    expect(entries(await exported(mirror, 'rpz'))).toContain('*.a.b.c.d.evil48.com CNAME .');
    const answers = await blocked(mirror, ['https://x.a.b.c.d.evil48.com/', 'https://x.y.z.a.b.c.d.evil48.com/login', 'https://b.c.d.evil48.com/']);
    expect(answers).toEqual({ 'https://x.a.b.c.d.evil48.com/': true, 'https://x.y.z.a.b.c.d.evil48.com/login': true, 'https://b.c.d.evil48.com/': false });
  }, 60_000);

  it('case 5: an IPv6 host matches in any spelling the browser reads as the same address', async () => {
    const mirror = await mirrorOf([threat('http://[2001:db8::1]/'), threat('http://[2001:0DB8:0:0:0:0:0:2]/login')]);
    const answers = await blocked(mirror, ['http://[2001:0db8:0:0::1]/', 'https://[2001:DB8::1]:8443/any', 'http://[2001:db8::2]/login', 'http://[2001:db8::3]/']);
    expect(answers).toEqual({ 'http://[2001:0db8:0:0::1]/': true, 'https://[2001:DB8::1]:8443/any': true, 'http://[2001:db8::2]/login': true, 'http://[2001:db8::3]/': false });
  }, 60_000);

  it.skipIf(skipWithout(['named-checkzone']))('a mirror written before the one reader answers by it after the writer\'s next start: every row derived again, export columns filled', async () => {
    const path = threat('https://sites.google.com/view/old-kit/%2e%2e%2f%2e%2e%2f');
    const spelled = threat('http:customer-portal.com');
    const service = await serveThreats(KEY, NOW, [path, spelled]);
    const dir = tempDir();
    const dbPath = join(dir, 'mirror.db');
    // As the version before left them: the path read as the whole host, the spelling as no URL, rules 2.
    createFileBeforeMigration(dbPath, '_one_meaning', (old) => {
      const insert = old.prepare('INSERT INTO threats (id, content, type, blocked_at, first_seen_at, updated_at, change_seq, host, registrable_domain, url_expression) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
      insert.run(path.id, path.content, 'URL', path.blockedAt, NOW, NOW, 1, 'sites.google.com', 'google.com', 'sites.google.com/');
      insert.run(spelled.id, spelled.content, 'URL', spelled.blockedAt, NOW, NOW, 2, null, null, null);
      old.prepare("INSERT INTO organization_threats (organization, threat_id, first_seen_at) VALUES ('acme', ?, ?), ('acme', ?, ?)").run(path.id, NOW, spelled.id, NOW);
      old.prepare("INSERT INTO mirror_settings (key, value, updated_at) VALUES ('lookup_rules', '2', ?)").run(NOW);
    });
    writeFileSync(join(dir, 'allow.txt'), 'customer-portal.com # ticket 4411\n');
    const env = mirrorEnv(service, dbPath, { THREAT_MIRROR_ALLOWLIST: join(dir, 'allow.txt') });
    const run = await runCli(['--once'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.logs.find((line) => String(line.msg).startsWith('derived the lookup columns again'))).toMatchObject({ threats: 2, changed: 2 });
    expect(scalar(dbPath, 'SELECT url_expression || \' \' || export_left_out FROM threats WHERE id = ?', path.id)).toBe('sites.google.com/view/old-kit/..%2F..%2F pathLevel');
    expect(scalar(dbPath, 'SELECT export_host FROM threats WHERE id = ?', spelled.id)).toBe('customer-portal.com');
    const rpz = (await runCli(['export', '--format', 'rpz'], env)).stdout;
    expect(listedHosts('rpz', rpz)).toEqual([]);
    expect(checkZone(dir, rpz).status).toBe(0);
    expect(await blocked({ env, dir }, ['https://sites.google.com/view/my-school'])).toEqual({ 'https://sites.google.com/view/my-school': false });
  }, 60_000);

  it('case 6: enforced_threats is current_threats without what the allowlist allows: a scope narrowed to URL hides the addresses from both', async () => {
    const address = threat('eip155:1:0xAbC0000000000000000000000000000000000037', 'ADDRESS');
    const url = threat('https://scoped-evil.com/');
    const service = await serveThreats(KEY, NOW, [address, url, threat('eip155:1:0xdef0000000000000000000000000000000000037', 'ADDRESS')]);
    const dir = tempDir();
    const dbPath = join(dir, 'mirror.db');
    writeFileSync(join(dir, 'allow.txt'), '# nothing allowed: enforced_threats must equal current_threats\n');
    const env = mirrorEnv(service, dbPath, { THREAT_MIRROR_ALLOWLIST: join(dir, 'allow.txt') });
    expect((await runCli(['--once'], env)).code).toBe(0);
    expect(scalar(dbPath, 'SELECT count(*) FROM enforced_threats')).toBe(3);
    const narrowed = await runCli(['--once'], { ...env, THREAT_MIRROR_ASSET_TYPES: 'URL' });
    expect(narrowed.code, narrowed.stderr).toBe(0);
    expect(scalar(dbPath, 'SELECT count(*) FROM current_threats')).toBe(1);
    expect(scalar(dbPath, 'SELECT group_concat(id) FROM enforced_threats')).toBe(String(url.id));
    expect(scalar(dbPath, 'SELECT count(*) FROM enforced_threats WHERE id = ?', address.id)).toBe(0);
    // Hidden from the lookup too; and a mirror of URL threats only cannot vouch for an address's miss.
    const lookup = await runCli(['lookup', '--json', address.content], { ...env, THREAT_MIRROR_ASSET_TYPES: 'URL' });
    expect(lookup.code).toBe(3);
    expect((JSON.parse(lookup.stdout) as { results: Array<{ blocked: boolean; reason: string }> }).results[0]).toMatchObject({
      blocked: false,
      reason: expect.stringContaining('mirrors only URL (THREAT_MIRROR_ASSET_TYPES): ADDRESS threats would match it') as unknown,
    });
  }, 60_000);
});
