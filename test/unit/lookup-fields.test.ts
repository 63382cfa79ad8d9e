import { describe, expect, it } from 'vitest';
import { deriveLookupFields } from '../../src/url/lookup-fields.js';

describe('deriveLookupFields', () => {
  it('derives host and registrable domain from URLs and pages', () => {
    expect(deriveLookupFields('URL', 'https://Login.Secure.Example-Bank.co.uk:8443/verify?x=1')).toMatchObject({
      host: 'login.secure.example-bank.co.uk',
      registrableDomain: 'example-bank.co.uk',
    });
    expect(deriveLookupFields('PAGE', 'http://victim.github.io/phish.html')).toMatchObject({ host: 'victim.github.io', registrableDomain: 'victim.github.io' });
    const idn = deriveLookupFields('URL', 'https://путь.example/x');
    expect(idn.host).toMatch(/^xn--[a-z0-9-]+\.example$/);
    expect(idn.registrableDomain).toBe(idn.host);
    expect(deriveLookupFields('URL', 'http://192.168.0.1/login')).toMatchObject({ host: '192.168.0.1', registrableDomain: null });
    expect(deriveLookupFields('URL', 'https://evil.example./')).toMatchObject({ host: 'evil.example', urlExpression: 'evil.example/' });
    expect(deriveLookupFields('PAGE', 'HTTP://Shared-Host.example:80/forms/./abc#x')).toMatchObject({ urlExpression: 'shared-host.example/forms/abc' });
    // A bare host is read as http://… by the one URL reader: it has a host like any URL.
    expect(deriveLookupFields('URL', 'evil.example/x')).toMatchObject({ host: 'evil.example', urlExpression: 'evil.example/x', exportHost: null, exportLeftOut: 'pathLevel' });
    expect(deriveLookupFields('URL', 'bücher-konto.com')).toMatchObject({ host: 'xn--bcher-konto-thb.com', urlExpression: 'xn--bcher-konto-thb.com/', exportHost: 'xn--bcher-konto-thb.com' });
    expect(deriveLookupFields('URL', `https://long.example.com/${'a'.repeat(20_000)}`)).toMatchObject({ host: 'long.example.com', exportLeftOut: 'pathLevel' });
    expect(deriveLookupFields('URL', `https://long.example.com/#${'a'.repeat(20_000)}`)).toMatchObject({ urlExpression: 'long.example.com/', exportHost: 'long.example.com' });
    expect(deriveLookupFields('URL', 'http://[2001:0db8:0:0::1]/')).toMatchObject({ host: '[2001:db8::1]', urlExpression: '[2001:db8::1]/', exportLeftOut: 'ipAddress' });
    expect(deriveLookupFields('URL', 'not a url at all')).toMatchObject({ urlExpression: null, exportHost: null, exportLeftOut: 'notAHost' });
    expect(deriveLookupFields('EMAIL', 'a@evil.example').urlExpression).toBeNull();
  });

  it('splits chain-qualified addresses, lower-casing hex ones only', () => {
    expect(deriveLookupFields('ADDRESS', 'eip155:1:0xAbCdEf0123456789abcdef0123456789ABCDEF01')).toMatchObject({
      addressNamespace: 'eip155',
      addressChain: '1',
      address: '0xabcdef0123456789abcdef0123456789abcdef01',
    });
    expect(deriveLookupFields('ADDRESS', 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp:7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV')).toMatchObject({
      addressNamespace: 'solana',
      address: '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV',
    });
    expect(deriveLookupFields('ADDRESS', '0xAbC123')).toMatchObject({ addressNamespace: null, address: '0xabc123' });
  });

  it('lower-cases e-mail addresses and keeps their domain', () => {
    expect(deriveLookupFields('EMAIL', 'Support.Team@Example-Bank.COM')).toMatchObject({ email: 'support.team@example-bank.com', emailDomain: 'example-bank.com' });
  });

  it('keeps NULL for content that does not parse, hostile content included, and never throws', () => {
    const none = { host: null, registrableDomain: null, addressNamespace: null, addressChain: null, address: null, email: null, emailDomain: null, urlExpression: null, exportHost: null, exportLeftOut: null };
    const hostile = [
      'https://',
      'http://[::1',
      "'; DROP TABLE threats; --",
      'nul\u0000inside',
      'eip155:1',
      'eip155::0xabc',
      'EIP155:1:0xabc',
      'not-an-email@',
      '@nobody.example',
      'a@b',
      '\u202Eevil\u202C@example.com',
      '',
    ];
    for (const content of hostile) {
      for (const type of ['URL', 'PAGE', 'ADDRESS', 'EMAIL']) {
        const fields = deriveLookupFields(type, content);
        if (type === 'URL' || type === 'PAGE') expect(fields.host, content).toBeNull();
        if (type === 'EMAIL') expect(fields.email, content).toBeNull();
        if (type === 'ADDRESS') expect(fields.addressChain, content).toBeNull();
      }
    }
    expect(deriveLookupFields('PLATFORM_03', 'https://social.example.com/@x')).toEqual(none);
  });
});
