import { describe, expect, it } from 'vitest';
import { canonicalExpression, canonicalizeUrl, canonicalizeUrlBytewise, canonicalizeWebUrl, formatCanonicalUrl, isHostBlock, parseIpv4 } from '../../src/url/canonical-url.js';
import { generateThreats } from '../../src/standin/index.js';
import { coveringExpressions, hostSuffixes, pathPrefixes, urlExpressions } from '../../src/url/expressions.js';

const canonical = (input: string): string | null => {
  const url = canonicalizeUrl(input);
  return url === null ? null : formatCanonicalUrl(url);
};

// Our own table from the examples in Safe Browsing API v4 "URLs and Hashing", section Canonicalization
// (https://developers.google.com/safe-browsing/v4/urls-hashing).
const SPEC_CANONICALIZATION: ReadonlyArray<readonly [string, string]> = [
  ['http://host/%25%32%35', 'http://host/%25'],
  ['http://host/%25%32%35%25%32%35', 'http://host/%25%25'],
  ['http://host/%2525252525252525', 'http://host/%25'],
  ['http://host/asdf%25%32%35asd', 'http://host/asdf%25asd'],
  ['http://host/%%%25%32%35asd%%', 'http://host/%25%25%25asd%25%25'],
  ['http://www.google.com/', 'http://www.google.com/'],
  [
    'http://%31%36%38%2e%31%38%38%2e%39%39%2e%32%36/%2E%73%65%63%75%72%65/%77%77%77%2E%65%62%61%79%2E%63%6F%6D/',
    'http://168.188.99.26/.secure/www.ebay.com/',
  ],
  [
    'http://195.127.0.11/uploads/%20%20%20%20/.verify/.eBaysecure=updateuserdataxplimnbqmn-xplmvalidateinfoswqpcmlx=hgplmcx/',
    'http://195.127.0.11/uploads/%20%20%20%20/.verify/.eBaysecure=updateuserdataxplimnbqmn-xplmvalidateinfoswqpcmlx=hgplmcx/',
  ],
  [
    'http://host%23.com/%257Ea%2521b%2540c%2523d%2524e%25f%255E00%252611%252A22%252833%252944_55%252B',
    'http://host%23.com/~a!b@c%23d$e%25f^00&11*22(33)44_55+',
  ],
  ['http://3279880203/blah', 'http://195.127.0.11/blah'],
  ['http://www.google.com/blah/..', 'http://www.google.com/'],
  ['www.google.com/', 'http://www.google.com/'],
  ['www.google.com', 'http://www.google.com/'],
  ['http://www.evil.com/blah#frag', 'http://www.evil.com/blah'],
  ['http://www.GOOgle.com/', 'http://www.google.com/'],
  ['http://www.google.com.../', 'http://www.google.com/'],
  ['http://www.google.com/foo\tbar\rbaz\n2', 'http://www.google.com/foobarbaz2'],
  ['http://www.google.com/q?', 'http://www.google.com/q?'],
  ['http://www.google.com/q?r?', 'http://www.google.com/q?r?'],
  ['http://www.google.com/q?r?s', 'http://www.google.com/q?r?s'],
  ['http://evil.com/foo#bar#baz', 'http://evil.com/foo'],
  ['http://evil.com/foo;', 'http://evil.com/foo;'],
  ['http://evil.com/foo?bar;', 'http://evil.com/foo?bar;'],
  // The specification's "http://\x01\x80.com/" is bytes; a JavaScript string is UTF-8 encoded first,
  // so the same bytes are written here escaped, and U+0080 becomes its two UTF-8 bytes.
  ['http://%01%80.com/', 'http://%01%80.com/'],
  ['http://\x01\x80.com/', 'http://%01%C2%80.com/'],
  ['http://notrailingslash.com', 'http://notrailingslash.com/'],
  ['http://www.gotaport.com:1234/', 'http://www.gotaport.com/'],
  ['  http://www.google.com/  ', 'http://www.google.com/'],
  ['http:// leadingspace.com/', 'http://%20leadingspace.com/'],
  ['http://%20leadingspace.com/', 'http://%20leadingspace.com/'],
  ['%20leadingspace.com/', 'http://%20leadingspace.com/'],
  ['https://www.securesite.com/', 'https://www.securesite.com/'],
  ['http://host.com/ab%23cd', 'http://host.com/ab%23cd'],
  ['http://host.com//twoslashes?more//slashes', 'http://host.com/twoslashes?more//slashes'],
];

describe('canonicalizeUrl', () => {
  it.each(SPEC_CANONICALIZATION)('canonicalizes %j like the specification', (input, expected) => {
    expect(canonical(input)).toBe(expected);
  });

  it('takes its shortcuts only where the byte-level steps give the same answer', () => {
    const generated = generateThreats({ seed: 7, organizations: ['acme'], count: 6000, fromDay: '2026-03-01', toDay: '2026-03-10', hostile: true })
      .filter((threat) => threat.type === 'URL' || threat.type === 'PAGE')
      .map((threat) => threat.content);
    // Variants that leave the shortcuts' ground: case, escapes, dots, IPv4 spellings, ports, spaces, non-ASCII.
    const variants = (url: string): string[] => [
      url,
      url.toUpperCase(),
      url.replace('://', '://WWW.'),
      url.replace(/\.com/, '.com.'),
      url.replace(/\.com/, '..com'),
      url.replace(/\/([^/]*)$/, '/./$1'),
      url.replace(/\/([^/]*)$/, '/x/../$1'),
      url.replace(/\/([^/]*)$/, '//$1'),
      url.replace(/e/, '%65'),
      url.replace(/e/g, '%2565'),
      url.replace(/\?/, '?q=%23#'),
      url.replace(/\?/, '? a'),
      url.replace(/[a-z]/, 'é'),
      url.replace(/:\/\/[^/]*/, '://0x7f.1'),
      url.replace(/:\/\/[^/]*/, '://3279880203'),
      url.replace(/:\/\/[^/]*/, '://017700000001:8080'),
      url.replace(/:\/\/[^/]*/, '://user@host-a_b.example'),
      url.replace(/:\/\/[^/]*/, '://[::1]'),
    ];
    const inputs = [...generated, ...SPEC_CANONICALIZATION.map(([input]) => input)].flatMap(variants);
    expect(inputs.length).toBeGreaterThan(30_000);
    for (const input of inputs) expect(canonicalizeUrl(input), input).toEqual(canonicalizeUrlBytewise(input));
  });

  it('treats browser-equivalent variants of a URL as one', () => {
    const want = 'evil.example/a/b';
    for (const variant of [
      'HTTP://Evil.Example:80/a/./b/../b#top',
      'http://evil.example./a/b',
      'http://%65vil.example/%61/b',
      'https://user:pass@EVIL.example/a//b',
      'evil.example/a/c/../b',
    ]) {
      expect(canonicalExpression(canonicalizeUrl(variant)!), variant).toBe(want);
    }
    expect(canonical('http://evil.example')).toBe('http://evil.example/');
  });

  it('normalizes IPv4 spellings and IDNs', () => {
    expect(parseIpv4('0x7f.1')).toBe('127.0.0.1');
    expect(parseIpv4('017.0.0.1')).toBe('15.0.0.1');
    expect(parseIpv4('1.2.3.256')).toBeNull();
    expect(parseIpv4('1.2.3.4.5')).toBeNull();
    expect(parseIpv4('08.1.1.1')).toBeNull();
    expect(canonical('http://0x7f000001/x')).toBe('http://127.0.0.1/x');
    expect(canonical('https://Пример.example/Путь')).toMatch(/^https:\/\/xn--[a-z0-9-]+\.example\/%D0%9F/);
    expect(canonical('http://[::1]:8080/a')).toBe('http://[::1]/a');
  });

  it('reads the authority of http(s) as browsers do: any run of / and \\ after the scheme, \\ as /, the host after the last @ before it (issue 32 item 2)', () => {
    expect(canonical('http://phish.example\\@bank.example/')).toBe('http://phish.example/@bank.example/');
    expect(canonical('https://phish.example\\.bank.example/a\\b?q=\\x')).toBe('https://phish.example/.bank.example/a/b?q=\\x');
    expect(canonical('http:\\\\evil.example\\x')).toBe('http://evil.example/x');
    expect(canonical('http:evil.example/x')).toBe('http://evil.example/x');
    expect(canonical('http:///path-only')).toBe('http://path-only/');
    expect(canonical('http://user:pass@good.example@evil.example/')).toBe('http://evil.example/');
    expect(canonical('\u0001 http://evil.example/\u0000 ')).toBe('http://evil.example/');
    expect(canonical('ftp://a\\b@c.example/')).toBe('ftp://a/b@c.example/');
    expect(canonicalizeWebUrl('http:\\\\evil.example\\x')).toMatchObject({ host: 'evil.example', path: '/x' });
  });

  it('refuses what is no web URL', () => {
    expect(canonicalizeUrl('mailto:someone@example.com')).toBeNull();
    expect(canonicalizeUrl('javascript:alert(1)')).toBeNull();
    expect(canonicalizeUrl('ipfs:/no-authority')).toBeNull();
    expect(canonicalizeUrl('')).toBeNull();
    expect(canonical('evil.example:8443/x')).toBe('http://evil.example/x');
  });

  it('reads only what says it is a URL when asked for a web URL', () => {
    expect(canonicalizeWebUrl('not a url at all')).toBeNull();
    expect(canonicalizeWebUrl('%20leadingspace.com/')).toBeNull();
    expect(canonicalizeWebUrl('hello')).toBeNull();
    expect(canonicalizeWebUrl(' Evil.Example/x ')).toMatchObject({ host: 'evil.example', path: '/x' });
    expect(canonicalizeWebUrl('1.2.3.4:8080/a')).toMatchObject({ host: '1.2.3.4', path: '/a' });
    expect(canonicalizeWebUrl('http:// leadingspace.com/')).toMatchObject({ host: '%20leadingspace.com' });
  });

  it('tells a whole-host block from a path block', () => {
    expect(isHostBlock(canonicalizeUrl('https://evil.example')!)).toBe(true);
    expect(isHostBlock(canonicalizeUrl('https://evil.example/#x')!)).toBe(true);
    expect(isHostBlock(canonicalizeUrl('https://evil.example/?')!)).toBe(false);
    expect(isHostBlock(canonicalizeUrl('https://shared-host.example/forms/abc')!)).toBe(false);
  });
});

describe('urlExpressions', () => {
  // The specification's examples, section Suffix/Prefix Expressions.
  it('lists the specification examples', () => {
    expect(urlExpressions('http://a.b.c/1/2.html?param=1')).toEqual([
      'a.b.c/1/2.html?param=1',
      'a.b.c/1/2.html',
      'a.b.c/',
      'a.b.c/1/',
      'b.c/1/2.html?param=1',
      'b.c/1/2.html',
      'b.c/',
      'b.c/1/',
    ]);
    expect(urlExpressions('http://a.b.c.d.e.f.g/1.html')).toEqual([
      'a.b.c.d.e.f.g/1.html',
      'a.b.c.d.e.f.g/',
      'c.d.e.f.g/1.html',
      'c.d.e.f.g/',
      'd.e.f.g/1.html',
      'd.e.f.g/',
      'e.f.g/1.html',
      'e.f.g/',
      'f.g/1.html',
      'f.g/',
    ]);
    expect(urlExpressions('http://1.2.3.4/1/')).toEqual(['1.2.3.4/1/', '1.2.3.4/']);
  });

  it('stays within 5 hosts and 6 paths', () => {
    expect(hostSuffixes('a.b.c.d.e.f.g.h')).toHaveLength(5);
    expect(hostSuffixes('com')).toEqual(['com']);
    expect(pathPrefixes('/1/2/3/4/5/6.html', 'q=1')).toEqual(['/1/2/3/4/5/6.html?q=1', '/1/2/3/4/5/6.html', '/', '/1/', '/1/2/', '/1/2/3/']);
    const all = urlExpressions('http://a.b.c.d.e.f.g.h/1/2/3/4/5/6.html?q=1');
    expect(all).toHaveLength(30);
    expect(new Set(all).size).toBe(30);
    expect(urlExpressions('mailto:x@example.com')).toEqual([]);
  });
});

describe('coveringExpressions', () => {
  const covers = (block: string, url: string): boolean => coveringExpressions(url).includes(canonicalExpression(canonicalizeUrl(block)!));

  it('a path block covers that path and below, nothing else on its host', () => {
    const block = 'https://shared-host.example/forms/abc';
    expect(covers(block, 'https://shared-host.example/forms/abc')).toBe(true);
    expect(covers(block, 'http://SHARED-HOST.example/forms/abc/step2?x=1')).toBe(true);
    expect(covers(block, 'https://shared-host.example/forms/abc/')).toBe(true);
    expect(covers(block, 'https://shared-host.example/forms/abcdef')).toBe(false);
    expect(covers(block, 'https://shared-host.example/forms/')).toBe(false);
    expect(covers(block, 'https://shared-host.example/other')).toBe(false);
    expect(covers(block, 'https://shared-host.example/')).toBe(false);
    expect(covers('https://h.example/a/b/c/d/e/f/g', 'https://h.example/a/b/c/d/e/f/g/h/i')).toBe(true);
  });

  it('a host block covers every path of the host and its subdomains', () => {
    const block = 'https://evil.example/';
    for (const url of ['https://evil.example/', 'http://evil.example/any/page?x=1', 'https://a.b.evil.example/login', 'evil.example']) {
      expect(covers(block, url), url).toBe(true);
    }
    expect(covers(block, 'https://notevil.example/')).toBe(false);
    expect(covers(block, 'https://evil.example.com/')).toBe(false);
    expect(covers('https://sub.evil.example/', 'https://evil.example/')).toBe(false);
  });

  it('a block with a query covers only that URL', () => {
    expect(covers('https://h.example/p?id=1', 'https://h.example/p?id=1')).toBe(true);
    expect(covers('https://h.example/p?id=1', 'https://h.example/p?id=2')).toBe(false);
    expect(covers('https://h.example/p?id=1', 'https://h.example/p')).toBe(false);
  });
});
