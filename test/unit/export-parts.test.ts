// The pure parts of the exports: flags and variables, zone serials, STIX strings and ids,
// the metamask parent rule, and which hosts are fit for a DNS list.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/cli/args.js';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/lib/errors.js';
import { blockableHost } from '../../src/url/blockable-host.js';
import { HostSet } from '../../src/export/host-set.js';
import { laterSerial, nextRpzSerial, nextZoneSerial, rpzSerialOf } from '../../src/export/formats/rpz.js';
import type { CurrentThreat, IndicatorSource } from '../../src/export/current-threats.js';
import { type HostEntry, hostEntryOf } from '../../src/export/host-selection.js';
import { deriveLookupFields } from '../../src/url/lookup-fields.js';
import { jsonlLine, valuesOf } from '../../src/export/formats/jsonl.js';
import { indicatorJson, indicatorOf, noStixCounts, patternOf, renderStix, STIX_NAMESPACE, type StixCounts, stixIndicators, stixString, stixTail, stixTimestamp, threatIndicatorUuid, uuidV5 } from '../../src/export/formats/stix.js';
import { addBlockCounts, noBlockCounts } from '../../src/export/parallel/row-blocks.js';
import { tempDir } from '../support/temp.js';
import { thrownMessage } from '../support/thrown.js';

const base = { THREAT_MIRROR_API_URL: 'http://127.0.0.1:9999', THREAT_MIRROR_API_KEY: 'k' };

const thrown = (run: () => unknown): string => thrownMessage(run, ConfigError);

describe('export flags and THREAT_MIRROR_EXPORTS', () => {
  it('reads the export command and refuses what does not fit', () => {
    expect(parseCommandLine(['export', '--format', 'rpz', '--out', '/tmp/x.rpz', '--org', 'acme'])).toEqual({
      kind: 'export', format: 'rpz', out: '/tmp/x.rpz', organization: 'acme', rules: false,
    });
    expect(parseCommandLine(['export', '--format', 'suricata', '--rules'])).toMatchObject({ rules: true, out: undefined });
    expect(thrown(() => parseCommandLine(['export']))).toMatch(/^export needs --format FORMAT \(one of domains, hosts/);
    expect(thrown(() => parseCommandLine(['export', '--format', 'zone']))).toMatch(/^--format: "zone" is not a format/);
    expect(thrown(() => parseCommandLine(['export', '--format', 'csv', '--rules']))).toBe('--rules: only with --format suricata');
    expect(thrown(() => parseCommandLine(['export', '--format', 'csv', '--json']))).toMatch(/^--json: not an option of the export command/);
    expect(thrown(() => parseCommandLine(['status', '--format', 'csv']))).toMatch(/^--format: not an option of the status command/);
  });

  it('reads format=path pairs and names the variable when one is wrong', () => {
    expect(loadConfig({ ...base, THREAT_MIRROR_EXPORTS: ' rpz=/data/t.rpz , hosts=/data/hosts.txt,' }).exports).toEqual([
      { format: 'rpz', path: '/data/t.rpz' },
      { format: 'hosts', path: '/data/hosts.txt' },
    ]);
    expect(loadConfig(base).exports).toEqual([]);
    expect(thrown(() => loadConfig({ ...base, THREAT_MIRROR_EXPORTS: 'rpz' }))).toBe('THREAT_MIRROR_EXPORTS: "rpz" is not format=path');
    expect(thrown(() => loadConfig({ ...base, THREAT_MIRROR_EXPORTS: 'bind=/x' }))).toMatch(/^THREAT_MIRROR_EXPORTS: "bind" is not a format/);
    expect(thrown(() => loadConfig({ ...base, THREAT_MIRROR_EXPORTS: 'rpz=/x,hosts=/x' }))).toBe('THREAT_MIRROR_EXPORTS: /x is listed twice');
  });
});

describe('THREAT_MIRROR_DNS_* variables', () => {
  it('are read into the DNS primary\'s settings, and a bad one names itself', () => {
    expect(loadConfig(base).dns).toBeUndefined();
    expect(loadConfig({ ...base, THREAT_MIRROR_DNS_PORT: '5353', THREAT_MIRROR_RPZ_ZONE: 'RPZ.Example.', THREAT_MIRROR_DNS_ALLOW: '10.0.0.0/8, fd00::/8,192.0.2.7', THREAT_MIRROR_DNS_NOTIFY: '10.0.0.53,[fd00::53]:5300' }).dns).toEqual({
      port: 5353, host: '127.0.0.1', zone: 'rpz.example',
      allow: [{ address: '10.0.0.0', prefix: 8, family: 'ipv4' }, { address: 'fd00::', prefix: 8, family: 'ipv6' }, { address: '192.0.2.7', prefix: 32, family: 'ipv4' }],
      notify: [{ host: '10.0.0.53', port: 53 }, { host: 'fd00::53', port: 5300 }],
    });
    expect(thrown(() => loadConfig({ ...base, THREAT_MIRROR_DNS_PORT: '70000' }))).toMatch(/^THREAT_MIRROR_DNS_PORT: "70000" must be at most 65535/);
    expect(thrown(() => loadConfig({ ...base, THREAT_MIRROR_DNS_ALLOW: '10.0.0.0/33' }))).toMatch(/^THREAT_MIRROR_DNS_ALLOW: "10.0.0.0\/33" is not/);
    expect(thrown(() => loadConfig({ ...base, THREAT_MIRROR_DNS_NOTIFY: 'resolver.example:53' }))).toMatch(/^THREAT_MIRROR_DNS_NOTIFY: "resolver.example:53" is not host:port/);
    expect(thrown(() => loadConfig({ ...base, THREAT_MIRROR_RPZ_ZONE: 'bad zone' }))).toMatch(/^THREAT_MIRROR_RPZ_ZONE: "bad zone" is not a zone name/);
    expect(thrown(() => loadConfig({ ...base, THREAT_MIRROR_DNS_HOST: 'localhost' }))).toMatch(/^THREAT_MIRROR_DNS_HOST: "localhost" is not an IP address/);
  });

  it('read THREAT_MIRROR_DNS_TSIG_KEY as dig -y and tsig-keygen write it, and refuse a bad one naming it, never quoting the secret', () => {
    const secret = Buffer.alloc(32, 7).toString('base64');
    const withKey = (value: string) => loadConfig({ ...base, THREAT_MIRROR_DNS_PORT: '5353', THREAT_MIRROR_DNS_TSIG_KEY: value }).dns?.tsig;
    for (const form of [`Xfr-Key.:${secret}`, `hmac-sha256:xfr-key:${secret}`, `HMAC-SHA256:xfr-key.:${secret}`]) {
      const key = withKey(form);
      expect(key?.name, form).toBe('xfr-key');
      expect(key?.secret.reveal(), form).toBe(secret);
      expect(JSON.stringify(key), form).not.toContain(secret);
    }
    // From a file (a Kubernetes Secret), its trailing newline trimmed.
    const file = join(tempDir(), 'tsig.key');
    writeFileSync(file, `hmac-sha256:xfr-key:${secret}\n`);
    expect(loadConfig({ ...base, THREAT_MIRROR_DNS_PORT: '5353', THREAT_MIRROR_DNS_TSIG_KEY_FILE: file }).dns?.tsig?.secret.reveal()).toBe(secret);
    const short = Buffer.alloc(8, 7).toString('base64');
    const refusals: Array<[string, RegExp]> = [
      [`hmac-md5:xfr-key:${secret}`, /^THREAT_MIRROR_DNS_TSIG_KEY: only hmac-sha256 is supported/],
      [secret, /^THREAT_MIRROR_DNS_TSIG_KEY: expected NAME:BASE64/],
      [`bad name:${secret}`, /^THREAT_MIRROR_DNS_TSIG_KEY: expected NAME:BASE64/],
      [`xfr-key:${short}`, /^THREAT_MIRROR_DNS_TSIG_KEY: the secret after "xfr-key:" must be base64 of at least 16 bytes/],
      ['xfr-key:not*base64!', /^THREAT_MIRROR_DNS_TSIG_KEY: the secret after "xfr-key:" must be base64/],
    ];
    for (const [value, message] of refusals) {
      const error = thrown(() => withKey(value));
      expect(error, value).toMatch(message);
      expect(error, value).not.toContain(value.split(':').at(-1));
    }
  });
});

describe('zone serials', () => {
  it("of an export follow change_seq in seconds (it counts from each writer start's microseconds), and grow past the file replaced", () => {
    const at = Date.parse('2026-03-15T12:00:00.000Z') * 1000;
    expect(nextRpzSerial(at + 120, undefined)).toBe(at / 1e6);
    expect(nextRpzSerial(at + 5_000_000, at / 1e6)).toBe(at / 1e6 + 5);
    // A file of an older version (change_seq from 1), or the same second: one more.
    expect(nextRpzSerial(at + 1, at / 1e6)).toBe(at / 1e6 + 1);
    expect(nextRpzSerial(52_000, undefined)).toBe(1);
    expect(nextRpzSerial(0, undefined)).toBe(1);
    expect(nextRpzSerial(5_000_000, 2 ** 32 - 10)).toBe(5); // RFC 1982: 5 is after 4294967286
    expect(nextRpzSerial((2 ** 32 + 7) * 1e6, undefined)).toBe(7);
    expect(rpzSerialOf('; c\n$TTL 300\n@ IN SOA localhost. hostmaster.localhost. 4242 3600 600 864000 300\n')).toBe(4242);
  });

  it("of the daemon's zone follow the clock in seconds, one more than the previous when the clock is not after it", () => {
    const at = Date.parse('2026-03-15T12:00:00.000Z');
    expect(nextZoneSerial(undefined, at)).toBe(at / 1000);
    // A rebuilt mirror's zone after the old one's, whatever its change_seq: the old serials were earlier times, or change_seqs.
    expect(nextZoneSerial(27, at)).toBe(at / 1000);
    expect(nextZoneSerial(at / 1000, at)).toBe(at / 1000 + 1);
    expect(nextZoneSerial(at / 1000 + 5, at + 999)).toBe(at / 1000 + 6);
    expect(nextZoneSerial(at / 1000, at + 60_000)).toBe(at / 1000 + 60);
    // RFC 1982 beyond 2106: the clock's seconds wrap, and stay after the serial before.
    expect(nextZoneSerial(2 ** 32 - 10, (2 ** 32 + 7) * 1000)).toBe(7);
    expect(laterSerial(5, 2 ** 32 - 10)).toBe(5);
    expect(laterSerial(100, 101)).toBe(101);
  });
});

describe('STIX helpers', () => {
  it('escape only quote and backslash, as the patterning grammar defines a string literal', () => {
    expect(stixString(`a'b\\c"d\n`)).toBe(`'a\\'b\\\\c"d\n'`);
  });

  it('make RFC 9562 version-5 UUIDs (the RFC\'s own example) in a namespace that is not STIX\'s SCO one', () => {
    // RFC 9562 appendix A.4: uuidv5(DNS namespace, "www.example.com").
    expect(uuidV5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'www.example.com')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
    expect(STIX_NAMESPACE).not.toBe('00abedb4-aa42-466c-9c01-fed23315a9b7');
  });
});

describe('records written out by hand', () => {
  const hostile = ['https://evil.example/\'"\\', 'nul\u0000tab\tnl\n\u2028\u007f', 'e\u0301 日本語 😀', `x${'y'.repeat(300)}`];
  const threats: CurrentThreat[] = hostile.map((content, index) => ({
    id: 10 ** index + 7, content, type: index % 2 === 0 ? 'URL' : 'PAGE', blockedAt: ['2026-03-15T12:00:00.000Z', '2026-02-28T23:59:59Z', '2026-03-31T00:00:00.123+02:00', '2024-02-29T10:00:00.5Z'][index] as string,
    firstSeenAt: '2026-03-15T12:00:01.000Z', updatedAt: '2026-03-16T00:00:00.000Z', changeSeq: index + 1, organizations: index === 0 ? ['acme', 'globex'] : ['acme'],
    host: index === 0 ? 'evil.example' : null, registrableDomain: null, addressNamespace: null, addressChain: null, address: null, email: index === 2 ? 'a"b@x.example' : null, emailDomain: null,
  }));
  const indicator = (threat: CurrentThreat): IndicatorSource => ({ ...threat, exportHost: null });

  it('are the bytes JSON.stringify gives for the same object (JSONL lines, STIX indicators)', () => {
    for (const threat of threats) {
      expect(jsonlLine(threat)).toBe(`${JSON.stringify(valuesOf(threat))}\n`);
      const pattern = patternOf(indicator(threat)) ?? "[url:value = 'x']";
      const validFrom = stixTimestamp(threat.blockedAt) as string;
      expect(indicatorJson(indicator(threat), pattern, validFrom)).toBe(JSON.stringify(indicatorOf(indicator(threat), pattern, validFrom)));
      expect(threatIndicatorUuid(threat.id)).toBe(uuidV5(STIX_NAMESPACE, `threat:${threat.id}`));
    }
  });

  it('keep STIX timestamps as Date writes them, taking a shortcut only where that is the same string', () => {
    for (const iso of ['2026-03-15T12:00:00.000Z', '2026-02-28T23:59:59Z', '2026-02-30T00:00:00.000Z', '2026-03-31T00:00:00.123+02:00', '2024-02-29T10:00:00.5Z', '2026-01-09T00:00:00.000Z', '0001-01-01T00:00:00.000Z']) {
      expect(stixTimestamp(iso), iso).toBe(new Date(iso).toISOString());
    }
    // Outside years 0001-9999 there is no RFC 3339 form, canonical-looking or not.
    for (const iso of ['0000-06-01T00:00:00.000Z', '9999-12-31T23:59:59-23:59']) expect(stixTimestamp(iso), iso).toBeUndefined();
  });
});

describe('host entries', () => {
  it('come only from whole-host blocks with a DNS name that is no public suffix', () => {
    const entry = (content: string): HostEntry => hostEntryOf({ type: 'URL', ...deriveLookupFields('URL', content) });
    expect(entry('HTTP://Evil.Com:80/a/../#x')).toEqual({ kind: 'host', host: 'evil.com' });
    expect(entry('https://docs-host.com/forms/abc')).toEqual({ kind: 'left-out', reason: 'pathLevel' });
    expect(entry('https://evil.com/?utm=1')).toEqual({ kind: 'left-out', reason: 'pathLevel' });
    expect(entry('evil.com')).toEqual({ kind: 'host', host: 'evil.com' });
    expect(entry('evil.example')).toEqual({ kind: 'left-out', reason: 'notDelegated' });
    expect(entry('mailto:a@evil.example')).toEqual({ kind: 'left-out', reason: 'notAHost' });
    expect(hostEntryOf({ type: 'EMAIL', exportHost: null, exportLeftOut: null })).toEqual({ kind: 'other-type' });
    expect(blockableHost('evil.com')).toBe('evil.com');
    expect(blockableHost('a_b.evil.co.uk')).toBe('a_b.evil.co.uk');
    expect(blockableHost('xn--80ak6aa92e.xn--p1ai')).toBe('xn--80ak6aa92e.xn--p1ai');
    expect(blockableHost('1.2.3.4')).toEqual({ problem: 'ipAddress' });
    expect(blockableHost('[::1]')).toEqual({ problem: 'ipAddress' });
    expect(blockableHost('blogspot.com')).toEqual({ problem: 'publicSuffix' });
    expect(blockableHost('com')).toEqual({ problem: 'publicSuffix' });
    expect(blockableHost(`${'x'.repeat(64)}.com`)).toEqual({ problem: 'notAHost' });
    expect(blockableHost(`${'a.'.repeat(126)}com`)).toEqual({ problem: 'notAHost' });
    expect(blockableHost("quote'.com")).toEqual({ problem: 'notAHost' });
    // Issue 32 item 1: RPZ trigger names and names outside a delegated top-level domain.
    for (const trigger of ['1.0.0.0.0.rpz-client-ip', '8.0.0.0.10.rpz-ip', 'ns.example.rpz-nsdname', '32.1.0.0.127.rpz-nsip', 'rpz-ip.evil.com', 'x.rpz-passthru.com']) {
      expect(blockableHost(trigger), trigger).toEqual({ problem: 'rpzTrigger' });
    }
    for (const undelegated of ['evil.example', 'localhost', 'printer.local', 'x.test', 'a.invalid', 'host.internal', 'single']) {
      expect(blockableHost(undelegated), undelegated).toEqual({ problem: 'notDelegated' });
    }
  });

  it('are kept once each, sorted, and without a listed parent for metamask (its detector blocks subdomains itself)', () => {
    const hosts = new HostSet();
    try {
      for (const host of ['a.evil.example', 'b.a.evil.example', 'evil-x.example', 'evil.example', 'x.evil-x.example', 'x.other2.example', 'evil.example']) hosts.add(host);
      expect(hosts.size).toBe(6);
      expect([...hosts.sorted()]).toEqual(['a.evil.example', 'b.a.evil.example', 'evil-x.example', 'evil.example', 'x.evil-x.example', 'x.other2.example']);
      expect([...hosts.sorted(14)]).toEqual(['a.evil.example', 'evil-x.example', 'evil.example']);
      // evil-x.example sorts between evil.example and its subdomains by bytes ("-" < "."), not by labels.
      expect([...hosts.withoutListedParent()].sort()).toEqual(['evil-x.example', 'evil.example', 'x.other2.example']);
    } finally {
      hosts.close();
    }
  });
});

describe('STIX timestamps (issue 32 item 8)', () => {
  it('leave out a row stored before normalization whose blockedAt has no RFC 3339 form, and count it', () => {
    const row = (id: number, blockedAt: string) => ({
      id, content: `https://stix-${id}.example/`, type: 'URL', blockedAt, email: null,
      firstSeenAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', changeSeq: id, organizations: ['acme'],
    });
    const counts: StixCounts = noStixCounts();
    const text = [...renderStix([row(1, '2026-01-01T00:00:00.000Z'), row(2, '9999-12-31T23:59:59-23:59')] as never, counts)].join('');
    expect(counts).toMatchObject({ indicators: 1, leftOut: { 'blockedAt outside 0001-9999': 1 }, lastChange: 1 });
    expect(text).not.toContain('+010000');
  });
});

describe("a STIX bundle's id", () => {
  const row = (id: number, changeSeq: number) => ({
    id, content: `https://bundle-${id}.example/`, type: 'URL', blockedAt: '2026-01-01T00:00:00.000Z', email: null,
    firstSeenAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', changeSeq, organizations: ['acme'],
  });
  const bundleId = (rows: ReturnType<typeof row>[]): string => (JSON.parse([...renderStix(rows as never, noStixCounts())].join('')) as { id: string }).id;

  it('differs for another set of the same size and latest change_seq (an allowlist that left out another threat), and is the same in blocks', () => {
    // Threats 1..4, the latest change on 4; an allowlist leaves out 2, another leaves out 3.
    const withoutTwo = [row(1, 10), row(3, 11), row(4, 40)];
    const withoutThree = [row(1, 10), row(2, 12), row(4, 40)];
    expect(bundleId(withoutTwo)).not.toBe(bundleId(withoutThree));
    expect(bundleId(withoutTwo)).toBe(bundleId([...withoutTwo]));
    // Rendered in two blocks whose counts are added (parallel-render.ts), in either order: the same id.
    const inBlocks = (first: ReturnType<typeof row>[], second: ReturnType<typeof row>[]): string => {
      const sum = noBlockCounts();
      for (const block of [second, first]) {
        const counts = noBlockCounts();
        [...stixIndicators(block as never, counts)];
        addBlockCounts(sum, counts);
      }
      return stixTail(sum).match(/bundle--[0-9a-f-]+/)?.[0] ?? '';
    };
    expect(inBlocks([row(1, 10)], [row(3, 11), row(4, 40)])).toBe(bundleId(withoutTwo));
    // Threat ids past 2^32 count by their high bits too.
    expect(bundleId([row(2 ** 32 + 7, 1)])).not.toBe(bundleId([row(7, 1)]));
  });
});
