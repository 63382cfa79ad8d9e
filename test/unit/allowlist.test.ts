// THREAT_MIRROR_ALLOWLIST's parts: reading a file into entries (kinds, reasons, refusals named by
// line) and matching threats and looked-up values with lookup's rules.
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AllowlistError, parseAllowlist } from '../../src/allowlist/allowlist-entries.js';
import { readAllowlist } from '../../src/allowlist/allowlist-file.js';
import { AllowMatcher, type ThreatFacts } from '../../src/allowlist/allow-matcher.js';
import { allowedHostsOf } from '../../src/export/host-selection.js';
import { deriveLookupFields } from '../../src/url/lookup-fields.js';

const dir = mkdtempSync(join(tmpdir(), 'threat-mirror-allowlist-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function matcherOf(text: string): AllowMatcher {
  return new AllowMatcher(parseAllowlist('allow.txt', text.split('\n')));
}

function facts(type: string, content: string): ThreatFacts {
  const fields = deriveLookupFields(type, content);
  return { content, urlExpression: fields.urlExpression, address: fields.address, addressNamespace: fields.addressNamespace, addressChain: fields.addressChain, email: fields.email };
}

function refusal(text: string): string {
  try {
    parseAllowlist('/etc/tm/allow.txt', text.split('\n'));
  } catch (error) {
    if (error instanceof AllowlistError) return error.message;
    throw error;
  }
  throw new Error(`accepted: ${text}`);
}

describe('reading the allowlist', () => {
  it('reads each kind of entry, a comment on its line as its reason, and skips blank and comment lines', () => {
    const entries = parseAllowlist('allow.txt', [
      '\uFEFF# customer domains that a feed blocked by mistake',
      '',
      'docs.example.com   # ticket 4411: the customer portal',
      'https://Shared.Example.com:443/Forms/ABC#top',
      'HTTPS://login.example.org/',
      'eip155:1:0xAbC0000000000000000000000000000000000001 # treasury',
      '0xDEF0000000000000000000000000000000000002',
      'Support@Example-Bank.com\r',
      'not a url#but this is no comment',
      '   \t  ',
    ]);
    expect(entries.map(({ line, kind, value, reason }) => ({ line, kind, value, reason }))).toEqual([
      { line: 3, kind: 'host', value: 'docs.example.com', reason: 'ticket 4411: the customer portal' },
      { line: 4, kind: 'url', value: 'https://Shared.Example.com:443/Forms/ABC#top', reason: null },
      { line: 5, kind: 'host', value: 'HTTPS://login.example.org/', reason: null },
      { line: 6, kind: 'address', value: 'eip155:1:0xAbC0000000000000000000000000000000000001', reason: 'treasury' },
      { line: 7, kind: 'address', value: '0xDEF0000000000000000000000000000000000002', reason: null },
      { line: 8, kind: 'email', value: 'Support@Example-Bank.com', reason: null },
      { line: 9, kind: 'exact', value: 'not a url#but this is no comment', reason: null },
    ]);
    expect(entries[1]).toMatchObject({ host: 'shared.example.com', path: '/Forms/ABC', query: null });
    expect(entries[3]).toMatchObject({ address: '0xabc0000000000000000000000000000000000001', addressNamespace: 'eip155', addressChain: '1' });
    expect(entries[5]).toMatchObject({ email: 'support@example-bank.com' });
  });

  it('refuses, naming file and line, what would allow too much or is written for another tool', () => {
    expect(refusal('ok.example.com\nco.uk')).toBe('/etc/tm/allow.txt line 2: "co.uk" would allow every site under "co.uk", a public suffix (or a single label); name the site itself');
    expect(refusal('http://localhost/')).toContain('line 1: "http://localhost/" would allow every site under "localhost"');
    // A single word is content (a user name, say), matched exactly: it allows no site.
    expect(parseAllowlist('allow.txt', ['com'])[0]?.kind).toBe('exact');
    expect(refusal('https://github.io/x')).toContain('line 1: "https://github.io/x" would allow every site under "github.io"');
    expect(refusal('a.example.com\n\n*.evil.example.com')).toContain('line 3: "*.evil.example.com" is a wildcard: write the bare host');
    expect(refusal('||evil.example.com^')).toContain('line 1: "||evil.example.com^" is AdGuard syntax');
    expect(refusal('0.0.0.0 evil.example.com')).toContain('line 1: "0.0.0.0 evil.example.com" is an /etc/hosts line');
    expect(refusal('https://')).toBe('/etc/tm/allow.txt line 1: "https://" is not an http(s) URL with a host a browser can open');
    expect(refusal(`ok.example.com\nx\u0000y`)).toBe('/etc/tm/allow.txt line 2: holds the control character U+0000');
    expect(refusal(`a.example.com\n${'x'.repeat(4097)}`)).toBe('/etc/tm/allow.txt line 2: longer than 4096 characters');
  });

  it('reads a file whole: one not UTF-8 is named by line; an empty one is no entry; one it cannot read is an error, never an empty list', () => {
    const bad = join(dir, 'latin1.txt');
    writeFileSync(bad, Buffer.concat([Buffer.from('ok.example.com\n'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])]));
    expect(() => readAllowlist(bad)).toThrow(`${bad} line 2: is not UTF-8 text`);
    const empty = join(dir, 'empty.txt');
    writeFileSync(empty, '');
    expect(readAllowlist(empty).list.entries).toEqual([]);
    expect(() => readAllowlist(join(dir, 'missing.txt'))).toThrow(/missing\.txt: cannot read it: ENOENT/);
    expect(() => readAllowlist(dir)).toThrow(/not a regular file/);
    const link = join(dir, 'link.txt');
    symlinkSync(empty, link);
    expect(readAllowlist(link).list.version).toBe(readAllowlist(empty).list.version);
  });

  it('names a file it may not read: EACCES', () => {
    const locked = join(dir, 'locked.txt');
    writeFileSync(locked, 'a.example.com\n');
    chmodSync(locked, 0o000);
    // Root reads any file: as root the read is made with the effective uid of nobody, then root's again.
    const root = process.getuid?.() === 0;
    if (root) process.seteuid?.(65534);
    try {
      expect(() => readAllowlist(locked)).toThrow(/cannot read it: EACCES/);
    } finally {
      if (root) process.seteuid?.(0);
    }
  });
});

describe('what an entry allows', () => {
  const allow = matcherOf([
    'docs.example.com # portal',
    'https://shared.example.org/forms/abc # one form',
    'https://h.example.net/p?id=1',
    'https://dir.example.net/a/',
    '0xAbC0000000000000000000000000000000000001',
    'eip155:137:0xdef0000000000000000000000000000000000002',
    'support@example-bank.com',
    'free text threat',
    '192.0.2.7',
  ].join('\n'));
  const allowedLine = (type: string, content: string): number | undefined => allow.threat(facts(type, content))?.line;

  it('a host and its subdomains at any depth, every path; not a sibling or a parent', () => {
    expect(allowedLine('URL', 'https://docs.example.com/')).toBe(1);
    expect(allowedLine('URL', 'https://a.b.c.d.e.f.docs.example.com/x/y?z')).toBe(1);
    expect(allowedLine('PAGE', 'docs.example.com/login')).toBe(1);
    expect(allowedLine('URL', 'https://example.com/')).toBeUndefined();
    expect(allowedLine('URL', 'https://notdocs.example.com/')).toBeUndefined();
    expect(allowedLine('URL', 'https://docs.example.com.evil.org/')).toBeUndefined();
  });

  it('a URL allows that path and below on its host and subdomains, as lookup matches (Safe Browsing)', () => {
    for (const content of ['https://shared.example.org/forms/abc', 'https://SHARED.example.org/forms/abc/step2?x=1', 'http://www.shared.example.org/forms/abc/']) {
      expect(allowedLine('URL', content), content).toBe(2);
    }
    for (const content of ['https://shared.example.org/forms/abcdef', 'https://shared.example.org/forms/', 'https://shared.example.org/']) {
      expect(allowedLine('URL', content), content).toBeUndefined();
    }
    expect(allowedLine('URL', 'https://h.example.net/p?id=1')).toBe(3);
    expect(allowedLine('URL', 'https://h.example.net/p?id=2')).toBeUndefined();
    expect(allowedLine('URL', 'https://h.example.net/p')).toBeUndefined();
    expect(allowedLine('URL', 'https://dir.example.net/a/b')).toBe(4);
    expect(allowedLine('URL', 'https://dir.example.net/a')).toBeUndefined();
    expect(allowedLine('URL', 'http://192.0.2.7/any')).toBe(9);
  });

  it('addresses fold as lookup folds them: a bare entry any chain, a qualified one its chain only; e-mails lower-cased; other content exactly', () => {
    expect(allowedLine('ADDRESS', 'eip155:1:0xABC0000000000000000000000000000000000001')).toBe(5);
    expect(allowedLine('ADDRESS', 'eip155:56:0xabc0000000000000000000000000000000000001')).toBe(5);
    expect(allowedLine('ADDRESS', 'eip155:137:0xDEF0000000000000000000000000000000000002')).toBe(6);
    expect(allowedLine('ADDRESS', 'eip155:1:0xdef0000000000000000000000000000000000002')).toBeUndefined();
    expect(allowedLine('EMAIL', 'SUPPORT@example-bank.com')).toBe(7);
    expect(allowedLine('PLATFORM_02', 'free text threat')).toBe(8);
    expect(allowedLine('PLATFORM_02', 'free text threat!')).toBeUndefined();
  });

  it('a looked-up value that an entry covers is allowed whatever threat matches it; a bare address only by a bare entry', () => {
    expect(allow.value('https://www.docs.example.com/x')?.line).toBe(1);
    expect(allow.value('  shared.example.org/forms/abc/2  ')?.line).toBe(2);
    expect(allow.value('https://shared.example.org/forms/')).toBeUndefined();
    expect(allow.value('eip155:1:0xabc0000000000000000000000000000000000001')?.line).toBe(5);
    expect(allow.value('0xdef0000000000000000000000000000000000002')).toBeUndefined();
    expect(allow.value('Support@Example-Bank.com')?.line).toBe(7);
  });

  it('gives the RPZ passthru names: hosts allowed whole that a zone can name, sorted; the rest counted', () => {
    const hosts = allowedHostsOf(matcherOf('zeta.example.com\ndocs.example.com\nhttps://docs.example.com/\n192.0.2.1\nintranet.internal\nrpz-ip.example.com'), 3);
    expect(hosts).toEqual({ threats: 3, passthru: ['docs.example.com', 'zeta.example.com'], notListed: 3 });
  });
});
