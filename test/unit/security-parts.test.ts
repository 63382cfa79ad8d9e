import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { rawArrayElements, rawMember } from '../../src/api/raw-json.js';
import { parseCursor, parseThreatPage } from '../../src/api/threat-client.js';
import { isLoopback, loadConfig, registerSecretsOf } from '../../src/config.js';
import { ConfigError } from '../../src/lib/errors.js';
import { redact, registerSecret } from '../../src/lib/redact.js';
import { Secret } from '../../src/lib/secret.js';

describe('redact', () => {
  it('removes every registered value in each form it takes, and URL credentials of any URL', () => {
    registerSecret('s3cr3t-"key"/+=');
    const text = `plain s3cr3t-"key"/+= json ${JSON.stringify('s3cr3t-"key"/+=')} url ${encodeURIComponent('s3cr3t-"key"/+=')} end`;
    expect(redact(text)).toBe('plain [redacted] json "[redacted]" url [redacted] end');
    expect(redact('GET https://bob:hunter22@api.example/x and ftp://token@host/')).toBe('GET https://[redacted]@api.example/x and ftp://[redacted]@host/');
    expect(redact('mail bob@example.com stays')).toBe('mail bob@example.com stays');
  });

  it('knows a key as soon as it is a Secret, and removes a longer key before a shorter one it contains', () => {
    const key = new Secret('abcd-1234-efgh');
    registerSecret('1234');
    expect(redact(`x ${key.reveal()} y 1234`)).toBe('x [redacted] y [redacted]');
  });

  it('ignores values too short to tell from ordinary text', () => {
    registerSecret('k');
    expect(redact('keep kites')).toBe('keep kites');
  });

  it('learns the keys and the URL password from the environment, not the user name', () => {
    registerSecretsOf({ THREAT_MIRROR_API_KEY_ACME: 'env-key-9f9f', THREAT_MIRROR_API_URL: 'https://alice:pa%24sword@h.example' });
    expect(redact('env-key-9f9f pa$sword pa%24sword alice')).toBe('[redacted] [redacted] [redacted] alice');
  });
});

describe('rawArrayElements', () => {
  it('returns each element as written, digits, escapes and nesting included', () => {
    const text = ' { "a" : [1], "threats" : [ {"id": 9007199254740993, "s": "x\\"]}"} , "t" ,[1,[2]], -1.5e3 ,null ] , "z": {"threats": 1} } ';
    expect(rawArrayElements(text, 'threats')).toEqual(['{"id": 9007199254740993, "s": "x\\"]}"}', '"t"', '[1,[2]]', '-1.5e3', 'null']);
    expect(rawArrayElements('{"threats": []}', 'threats')).toEqual([]);
    expect(rawArrayElements('{"other": []}', 'threats')).toBeUndefined();
    expect(rawArrayElements('{"threats": [1], "threats": [2]}', 'threats')).toEqual(['2']);
  });

  it('rawMember returns a top-level member as written: the digits JSON.parse rounds away', () => {
    const text = '{ "id" : 9007199254740993 , "nested": {"id": 1}, "nextCursor":9007199254741093}';
    expect(JSON.parse(text)).toMatchObject({ id: 9007199254740992 });
    expect(rawMember(text, 'id')).toBe('9007199254740993');
    expect(rawMember(text, 'nextCursor')).toBe('9007199254741093');
    expect(rawMember(text, 'nested')).toBe('{"id": 1}');
    expect(rawMember(text, 'missing')).toBeUndefined();
  });
});

describe('parseCursor', () => {
  it('accepts a positive integer in string form or as a safe number, and null', () => {
    expect(parseCursor('2', 'org')).toBe('2');
    expect(parseCursor('12345678901234567890', 'org')).toBe('12345678901234567890');
    expect(parseCursor(17, 'org')).toBe('17');
    expect(parseCursor(null, 'org')).toBeNull();
    expect(parseCursor(undefined, 'org')).toBeNull();
  });

  it('refuses anything else, quoting the value', () => {
    const cases: Array<[unknown, string]> = [
      ['abc', '"abc"'], ['999999999999999999999', '"999999999999999999999"'], ['0', '"0"'], ['-5', '"-5"'], ['', '""'], [' 2', '" 2"'], ['2.5', '"2.5"'],
      [{ page: 2 }, '{"page":2}'], [[2], '[2]'], [0, '0'], [-5, '-5'], [2.5, '2.5'], [true, 'true'], [2 ** 53 + 2, String(2 ** 53 + 2)],
    ];
    for (const [value, quoted] of cases) {
      expect(() => parseCursor(value, 'org'), quoted).toThrow(`org: response "next_page" must be a positive integer in string form (at most 20 digits) or null, got ${quoted}`);
    }
  });
});

describe('rejected records', () => {
  it('keep the digits of an id beyond 2^53, with a reason saying it is not a safe integer', () => {
    const text = '{"threats":[{"id":1,"content":"a","type":"URL","blockedAt":"2024-05-01T00:00:00.000Z"},{"id":9007199254740993,"content":"b","type":"URL","blockedAt":"2024-05-01T00:00:00.000Z"}],"next_page":null}';
    const page = parseThreatPage(JSON.parse(text) as unknown, 'org', text);
    expect(page.threats).toHaveLength(1);
    expect(page.rejected).toHaveLength(1);
    expect(page.rejected[0]?.raw).toBe('{"id":9007199254740993,"content":"b","type":"URL","blockedAt":"2024-05-01T00:00:00.000Z"}');
    expect(page.rejected[0]?.reason).toMatch(/^id is not a safe integer/);
  });
});

describe('the base URL', () => {
  const base = { THREAT_MIRROR_API_KEY: 'k-secret-1' };
  const refusal = (env: Record<string, string>): string => {
    try {
      loadConfig(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error('expected a ConfigError');
  };

  it('is refused with credentials in it, naming the variable and not the password', () => {
    const message = refusal({ ...base, THREAT_MIRROR_API_URL: 'https://user:Pw-0f-the-day@api.example.com' });
    expect(message).toMatch(/^THREAT_MIRROR_API_URL: must not contain credentials/);
    expect(message).not.toContain('Pw-0f-the-day');
  });

  it('is refused as plain http:// to a host that is not loopback unless allowed, and then marked insecure', () => {
    expect(refusal({ ...base, THREAT_MIRROR_API_URL: 'http://api.example.com' })).toMatch(/^THREAT_MIRROR_API_URL: plain http:\/\/ to api\.example\.com.*THREAT_MIRROR_ALLOW_INSECURE_HTTP=1/);
    expect(refusal({ ...base, THREAT_MIRROR_API_URL: 'http://api.example.com', THREAT_MIRROR_ALLOW_INSECURE_HTTP: 'maybe' })).toMatch(/^THREAT_MIRROR_ALLOW_INSECURE_HTTP: "maybe"/);
    expect(loadConfig({ ...base, THREAT_MIRROR_API_URL: 'http://api.example.com', THREAT_MIRROR_ALLOW_INSECURE_HTTP: '1' }).insecureHttp).toBe(true);
    for (const url of ['http://127.0.0.1:8080', 'http://localhost:1', 'http://[::1]:2', 'https://api.example.com']) {
      expect(loadConfig({ ...base, THREAT_MIRROR_API_URL: url }).insecureHttp, url).toBe(false);
    }
  });

  it('knows loopback hosts', () => {
    for (const host of ['localhost', '127.0.0.1', '127.1.2.3', '[::1]', '::1']) expect(isLoopback(host), host).toBe(true);
    // *.localhost goes to DNS (glibc), which may answer any address: not loopback.
    for (const host of ['0.0.0.0', '10.0.0.1', 'a.localhost', 'api.localhost', 'localhost.', 'localhost.example.com', '128.0.0.1', '127.0.0.256', '[::2]']) {
      expect(isLoopback(host), host).toBe(false);
    }
  });
});

describe('the logger', () => {
  it('passes every finished line through the redaction point, whatever field holds the secret', () => {
    // The compiled logger in a process of its own: it writes to file descriptor 1.
    const dist = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'src');
    const script = `
      const { registerSecret } = await import(${JSON.stringify(join(dist, 'lib', 'redact.js'))});
      const { createLogger } = await import(${JSON.stringify(join(dist, 'lib', 'logger.js'))});
      registerSecret('log-secret-0123');
      const { logger, flush } = createLogger('info');
      logger.warn({ detail: 'echoed log-secret-0123', url: 'https://u:pw-9876@h.example', err: new Error('boom log-secret-0123') }, 'message log-secret-0123');
      flush();`;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(output).not.toContain('log-secret-0123');
    expect(output).not.toContain('pw-9876');
    const line = JSON.parse(output) as Record<string, unknown>;
    expect(line).toMatchObject({ msg: 'message [redacted]', detail: 'echoed [redacted]', url: 'https://[redacted]@h.example' });
  });
});
