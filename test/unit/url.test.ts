// The one URL reader (src/url/web-url.ts) and the Safe Browsing expressions built from its result
// (src/url/expressions.ts): the specification's examples where the browser agrees, the browser's
// reading where it does not, and the coverage rule lookups apply.
import { describe, expect, it } from 'vitest';
import { coveringExpressions, CUT_MARK, hostSuffixes, MAX_EXPRESSION_PATH, parentHosts, pathPrefixes, urlExpression, urlExpressions } from '../../src/url/expressions.js';
import { browserInput, isHostLevel, readWebUrl, type WebUrl } from '../../src/url/web-url.js';

const read = (input: string): WebUrl => {
  const url = readWebUrl(input);
  if (url === null) throw new Error(`no web URL: ${JSON.stringify(input)}`);
  return url;
};
/** The URL written back out as http://host/path?query, or null. */
const written = (input: string): string | null => {
  const url = readWebUrl(input);
  return url === null ? null : `http://${urlExpression(url)}`;
};

// Safe Browsing API v4 "URLs and Hashing", section Canonicalization
// (https://developers.google.com/safe-browsing/v4/urls-hashing): the examples, with what the reader
// gives. Where it differs from the specification the browser does too, and the browser decides
// which site is visited: the note says why.
const SPEC_EXAMPLES: ReadonlyArray<readonly [input: string, expected: string | null, note?: string]> = [
  ['http://host/%25%32%35', 'http://host/%25'],
  ['http://host/%25%32%35%25%32%35', 'http://host/%25%25'],
  ['http://host/%2525252525252525', 'http://host/%25'],
  ['http://host/asdf%25%32%35asd', 'http://host/asdf%25asd'],
  ['http://host/%%%25%32%35asd%%', 'http://host/%25%25%25asd%25%25'],
  ['http://www.google.com/', 'http://www.google.com/'],
  ['http://%31%36%38%2e%31%38%38%2e%39%39%2e%32%36/%2E%73%65%63%75%72%65/%77%77%77%2E%65%62%61%79%2E%63%6F%6D/', 'http://168.188.99.26/.secure/www.ebay.com/'],
  [
    'http://195.127.0.11/uploads/%20%20%20%20/.verify/.eBaysecure=updateuserdataxplimnbqmn-xplmvalidateinfoswqpcmlx=hgplmcx/',
    'http://195.127.0.11/uploads/%20%20%20%20/.verify/.eBaysecure=updateuserdataxplimnbqmn-xplmvalidateinfoswqpcmlx=hgplmcx/',
  ],
  ['http://host%23.com/%257Ea%2521b%2540c%2523d%2524e%25f%255E00%252611%252A22%252833%252944_55%252B', null, 'a "#" in a host: the browser refuses the URL'],
  ['http://3279880203/blah', 'http://195.127.0.11/blah'],
  ['http://www.google.com/blah/..', 'http://www.google.com/'],
  ['www.google.com/', 'http://www.google.com/'],
  ['www.google.com', 'http://www.google.com/'],
  ['http://www.evil.com/blah#frag', 'http://www.evil.com/blah'],
  ['http://www.GOOgle.com/', 'http://www.google.com/'],
  ['http://www.google.com.../', 'http://www.google.com../', 'the browser keeps the empty labels (one trailing dot dropped): no DNS name, listed nowhere'],
  ['http://www.google.com/foo\tbar\rbaz\n2', 'http://www.google.com/foobarbaz2'],
  ['http://www.google.com/q?', 'http://www.google.com/q?'],
  ['http://www.google.com/q?r?', 'http://www.google.com/q?r?'],
  ['http://www.google.com/q?r?s', 'http://www.google.com/q?r?s'],
  ['http://evil.com/foo#bar#baz', 'http://evil.com/foo'],
  ['http://evil.com/foo;', 'http://evil.com/foo;'],
  ['http://evil.com/foo?bar;', 'http://evil.com/foo?bar;'],
  ['http://\x01\x80.com/', null, 'a control character in a host: the browser refuses the URL'],
  ['http://notrailingslash.com', 'http://notrailingslash.com/'],
  ['http://www.gotaport.com:1234/', 'http://www.gotaport.com/'],
  ['  http://www.google.com/  ', 'http://www.google.com/'],
  ['http:// leadingspace.com/', null, 'a space in a host: the browser refuses the URL'],
  ['http://%20leadingspace.com/', null, 'a space in a host: the browser refuses the URL'],
  ['https://www.securesite.com/', 'http://www.securesite.com/'],
  ['http://host.com/ab%23cd', 'http://host.com/ab%23cd'],
  ['http://host.com//twoslashes?more//slashes', 'http://host.com//twoslashes?more//slashes', 'the browser asks for //twoslashes; lookups also try the path with slashes collapsed'],
];

describe('the URL reader: the browser\'s reading', () => {
  it.each(SPEC_EXAMPLES)('reads %j as %j', (input, expected) => {
    expect(written(String(input))).toBe(expected);
  });

  it('applies the browser\'s input rules: C0 controls and spaces trimmed at the ends, tab/CR/LF removed anywhere; Unicode spaces kept', () => {
    expect(browserInput('\u0001 ht\ttps://evil.example/\r\nx\u0000 ')).toBe('https://evil.example/x');
    expect(browserInput('https://drive.example/\u3000')).toBe('https://drive.example/\u3000');
    for (const spelling of ['http:evil-one.com/x', 'https:evil-one.com', '\u0001https://evil-one.com/x', 'http:\t//evil-one.com/x', 'ht\ttps://evil-one.com/x', 'HTTP:\\\\evil-one.com\\x']) {
      expect(readWebUrl(spelling)?.host, JSON.stringify(spelling)).toBe('evil-one.com');
    }
  });

  it('a path stays a path whatever its escapes or trailing characters: only the browser path "/" with no query blocks the host', () => {
    const pathLevel = [
      'https://sites.google.com/view/phish-kit/%2e%2e%2f%2e%2e%2f',
      'https://docs.google.com/forms/d/x/viewform%2F..%2F..%2F..',
      'https://drive.google.com/\u3000',
      'https://drive.google.com/\u00a0',
      'https://drive.google.com/\ufeff',
      'https://drive.google.com/\u2028',
      'https://evil.example//',
      'https://evil.example/?',
      'https://evil.example/?utm=1',
    ];
    for (const content of pathLevel) expect(isHostLevel(read(content)), JSON.stringify(content)).toBe(false);
    expect(pathLevel.slice(0, 3).map((content) => urlExpression(read(content)))).toEqual([
      'sites.google.com/view/phish-kit/..%2F..%2F',
      'docs.google.com/forms/d/x/viewform%2F..%2F..%2F..',
      'drive.google.com/%E3%80%80',
    ]);
    for (const content of ['https://evil.example', 'https://evil.example/#x', 'HTTP://Evil.Example:80/a/../#x', 'http:evil.example', 'evil.example', 'https://evil.example/%2e/', 'https://u@evil.example/#' + 'f'.repeat(5000)]) {
      expect(isHostLevel(read(content)), JSON.stringify(content)).toBe(true);
    }
  });

  it('makes escapes canonical within a segment, never across one: an escaped "/" or "?" stays, a segment unescaped to a dot segment is escaped whole', () => {
    expect(urlExpression(read('http://h.example/%7Ea/%c3%a9/%41'))).toBe('h.example/~a/%C3%A9/A');
    expect(urlExpression(read('http://h.example/a%2fb%3Fc'))).toBe('h.example/a%2Fb%3Fc');
    expect(urlExpression(read('http://h.example/%252e%252e/x'))).toBe('h.example/%2E%2E/x');
    expect(urlExpression(read('http://h.example/a%zz'))).toBe('h.example/a%25zz');
    expect(urlExpression(read('http://h.example/p?q=%2F%20a%23'))).toBe('h.example/p?q=/%20a%23');
  });

  it('treats browser-equivalent spellings as one', () => {
    for (const variant of ['HTTP://Evil.Example:80/a/./b/../b#top', 'http://evil.example./a/b', 'http://%65vil.example/%61/b', 'https://user:pass@EVIL.example/a/b', 'evil.example/a/c/../b', 'http://evil.example/a/.%2e/a/b']) {
      expect(urlExpression(read(variant)), variant).toBe('evil.example/a/b');
    }
  });

  it('gives hosts in the parser\'s canonical form: IPv4 any spelling, IPv6 compressed, IDNs in xn--', () => {
    expect(read('http://0x7f.1/').host).toBe('127.0.0.1');
    expect(read('http://017700000001:8080/x').host).toBe('127.0.0.1');
    expect(read('http://[2001:0db8:0:0::1]/').host).toBe('[2001:db8::1]');
    expect(read('http://[2001:DB8:0:0:0:0:0:1]:8080/a').host).toBe('[2001:db8::1]');
    expect(read('https://Пример.example/Путь').host).toMatch(/^xn--[a-z0-9-]+\.example$/);
    expect(read('bücher-konto.com').host).toBe('xn--bcher-konto-thb.com');
    expect(read('http://www.foo\u3002bar.com/').host).toBe('www.foo.bar.com');
  });

  it('reads the authority as the browser does (issue 32 item 2)', () => {
    expect(written('http://phish.example\\@bank.example/')).toBe('http://phish.example/@bank.example/');
    expect(written('https://phish.example\\.bank.example/a\\b?q=\\x')).toBe('http://phish.example/.bank.example/a/b?q=\\x');
    expect(written('http:///path-only')).toBe('http://path-only/');
    expect(written('http://user:pass@good.example@evil.example/')).toBe('http://evil.example/');
    expect(written('http://evil.example%5c@bank.example/')).toBe('http://bank.example/');
  });

  it('reads no URL where the browser opens no http(s) page, and no host from free text', () => {
    for (const input of ['mailto:someone@example.com', 'javascript:alert(1)', 'ipfs:/no-authority', 'ftp://evil.example/', 'ws://evil.example/', '', 'not a url at all', 'hello', '%20leadingspace.com/', 'https://evil-one.com%2F..%2F/', 'http://[::1', `http://${'a.'.repeat(130)}com/`]) {
      expect(readWebUrl(input), JSON.stringify(input)).toBeNull();
    }
    expect(written(' Evil.Example/x ')).toBe('http://evil.example/x');
    expect(written('evil.example:8443/x')).toBe('http://evil.example/x');
    expect(written('1.2.3.4:8080/a')).toBe('http://1.2.3.4/a');
  });

  it('reads a value of any length; an expression keeps 4,096 characters of path and query and marks the cut', () => {
    const long = `https://long.example/dir/${'a'.repeat(10_000)}?q=1`;
    const expression = urlExpression(read(long));
    expect(expression).toHaveLength('long.example'.length + MAX_EXPRESSION_PATH + 1);
    expect(expression.endsWith(CUT_MARK)).toBe(true);
    expect(urlExpression(read(`${long}&more`))).toBe(expression);
    expect(coveringExpressions(read(`${long}/below`))).toContain(expression);
    expect(coveringExpressions(read(`${long}/below`))).toContain('long.example/dir/');
  });
});

describe('urlExpressions', () => {
  // The specification's examples, section Suffix/Prefix Expressions.
  it('lists the specification examples', () => {
    expect(urlExpressions(read('http://a.b.c/1/2.html?param=1'))).toEqual(['a.b.c/1/2.html?param=1', 'a.b.c/1/2.html', 'a.b.c/', 'a.b.c/1/', 'b.c/1/2.html?param=1', 'b.c/1/2.html', 'b.c/', 'b.c/1/']);
    expect(urlExpressions(read('http://a.b.c.d.e.f.g/1.html'))).toEqual([
      'a.b.c.d.e.f.g/1.html', 'a.b.c.d.e.f.g/', 'c.d.e.f.g/1.html', 'c.d.e.f.g/', 'd.e.f.g/1.html', 'd.e.f.g/', 'e.f.g/1.html', 'e.f.g/', 'f.g/1.html', 'f.g/',
    ]);
    expect(urlExpressions(read('http://1.2.3.4/1/'))).toEqual(['1.2.3.4/1/', '1.2.3.4/']);
  });

  it('stays within 5 hosts and 6 paths', () => {
    expect(hostSuffixes('a.b.c.d.e.f.g.h')).toHaveLength(5);
    expect(hostSuffixes('com')).toEqual(['com']);
    expect(pathPrefixes('/1/2/3/4/5/6.html', 'q=1')).toEqual(['/1/2/3/4/5/6.html?q=1', '/1/2/3/4/5/6.html', '/', '/1/', '/1/2/', '/1/2/3/']);
    const all = urlExpressions(read('http://a.b.c.d.e.f.g.h/1/2/3/4/5/6.html?q=1'));
    expect(all).toHaveLength(30);
    expect(new Set(all).size).toBe(30);
  });
});

describe('coveringExpressions', () => {
  const covers = (block: string, url: string): boolean => coveringExpressions(read(url)).includes(urlExpression(read(block)));

  it('a path block covers that path and below, nothing else on its host', () => {
    const block = 'https://shared-host.example/forms/abc';
    expect(covers(block, 'https://shared-host.example/forms/abc')).toBe(true);
    expect(covers(block, 'http://SHARED-HOST.example/forms/abc/step2?x=1')).toBe(true);
    expect(covers(block, 'https://shared-host.example/forms/abc/')).toBe(true);
    expect(covers(block, 'https://shared-host.example//forms/abc')).toBe(true);
    expect(covers(block, 'https://shared-host.example/forms/abcdef')).toBe(false);
    expect(covers(block, 'https://shared-host.example/forms/')).toBe(false);
    expect(covers(block, 'https://shared-host.example/other')).toBe(false);
    expect(covers(block, 'https://shared-host.example/')).toBe(false);
    expect(covers('https://h.example/a/b/c/d/e/f/g', 'https://h.example/a/b/c/d/e/f/g/h/i')).toBe(true);
  });

  it('a host block covers every path of the host and its subdomains at any depth', () => {
    const block = 'https://evil.example/';
    for (const url of ['https://evil.example/', 'http://evil.example/any/page?x=1', 'https://a.b.evil.example/login', 'evil.example', 'https://a.b.c.d.e.f.g.h.evil.example/x']) {
      expect(covers(block, url), url).toBe(true);
    }
    expect(covers('https://a.b.c.d.evil48.com/', 'https://x.y.z.a.b.c.d.evil48.com/page')).toBe(true);
    expect(covers(block, 'https://notevil.example/')).toBe(false);
    expect(covers(block, 'https://evil.example.com/')).toBe(false);
    expect(covers('https://sub.evil.example/', 'https://evil.example/')).toBe(false);
    expect(parentHosts('a.b.evil.example')).toEqual(['b.evil.example', 'evil.example']);
    expect(parentHosts('[2001:db8::1]')).toEqual([]);
  });

  it('a block with a query covers only that URL', () => {
    expect(covers('https://h.example/p?id=1', 'https://h.example/p?id=1')).toBe(true);
    expect(covers('https://h.example/p?id=1', 'https://h.example/p?id=2')).toBe(false);
    expect(covers('https://h.example/p?id=1', 'https://h.example/p')).toBe(false);
  });

  it('an IPv6 host matches in every spelling', () => {
    expect(covers('http://[2001:db8::1]/', 'http://[2001:0db8:0:0::1]/x')).toBe(true);
  });
});
