// `threat-mirror lookup` on what the service's data can hold: contents printed as stored (issue 32
// item 10), control characters never reaching the terminal raw (item 7), long values and bare
// addresses matched (issue 33 item 7). The built CLI against the stand-in, into a real file.
import { describe, expect, it } from 'vitest';
import type { StandinThreat } from '../src/standin/index.js';
import { runCli } from './support/cli.js';
import { scalar } from './support/mirror-db.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEY = 'hostile-lookup-key-51e0';
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: '2' });

const threat = (id: number, content: string, type = 'URL'): StandinThreat => ({ id, content, type, blockedAt: `${TODAY}T10:00:00.000Z`, organization: 'acme' });

async function synced(threats: StandinThreat[]): Promise<string> {
  const service = await serveThreats(KEY, NOW, threats);
  const dbPath = tempDbPath();
  const result = await runCli(['--once'], env(service, dbPath));
  expect(result.code, result.stderr).toBe(0);
  return dbPath;
}

interface LookupDocument {
  results: Array<{ value: string; blocked: boolean; matches: Array<{ id: number; content: string; match: { by: string; expression?: string } }> }>;
}

async function lookupJson(dbPath: string, values: string[]): Promise<LookupDocument> {
  const result = await runCli(['lookup', '--json', ...values], { THREAT_MIRROR_DB: dbPath });
  return JSON.parse(result.stdout) as LookupDocument;
}

describe('lookup prints contents as stored (issue 32 item 10)', () => {
  it('a stored content with URL credentials is shown whole by the text and JSON output, not as http://[redacted]@…', async () => {
    const content = 'http://support:bank-login@bank.example/verify';
    const dbPath = await synced([threat(1, content)]);
    const text = await runCli(['lookup', 'http://bank.example/verify'], { THREAT_MIRROR_DB: dbPath });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`#1 URL ${JSON.stringify(content)}`);
    expect(text.stdout).not.toContain('[redacted]');
    expect((await lookupJson(dbPath, ['http://bank.example/verify'])).results[0]?.matches[0]?.content).toBe(content);
  });

  it('still never prints our own key, wherever it appears', async () => {
    const content = `https://echo.example/?k=${KEY}`;
    const dbPath = await synced([threat(1, content)]);
    // The positive control: the stored content holds the key, and a lookup without the key set prints it.
    expect(scalar(dbPath, 'SELECT content FROM threats WHERE id = 1')).toBe(content);
    const unkeyed = await runCli(['lookup', content], { THREAT_MIRROR_DB: dbPath });
    expect([unkeyed.code, unkeyed.stdout]).toEqual([0, expect.stringContaining(KEY)]);
    for (const args of [['lookup', content], ['lookup', '--json', content]]) {
      const keyed = await runCli(args, { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_API_KEY: KEY });
      expect(keyed.code, keyed.stderr).toBe(0);
      expect(keyed.stdout).toContain('https://echo.example/?k=[redacted]');
      expect(`${keyed.stdout}${keyed.stderr}`).not.toContain(KEY);
    }
  });
});

describe('lookup text escapes control characters (issue 32 item 7)', () => {
  it('a content holding C1 CSI and DEL is shown with visible escapes; --json keeps the value exact', async () => {
    // JSON.stringify (the text output's quoting) escapes C0 but leaves DEL and C1 raw.
    const content = 'https://c1.example/\u009b2J\u009b31mpaid\u007f';
    const dbPath = await synced([threat(1, content)]);
    const text = await runCli(['lookup', content], { THREAT_MIRROR_DB: dbPath });
    expect(text.code).toBe(0);
    expect(text.stdout).not.toMatch(/[\u007f-\u009f]/);
    expect(text.stdout).toContain('\\u009b2J');
    expect((await lookupJson(dbPath, [content])).results[0]?.matches[0]?.content).toBe(content);
  });
});

describe('lookups match long values and bare addresses (issue 33 item 7)', () => {
  const SOLANA = '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU';
  const BECH32 = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
  const THREATS = [
    threat(1, 'https://long-host.com/'),
    threat(2, 'https://shared-forms.com/forms/abc/'),
    threat(3, `solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp:${SOLANA}`, 'ADDRESS'),
    threat(4, `bip122:000000000019d6689c085ae165831e93:${BECH32}`, 'ADDRESS'),
  ];

  it('a host block covers a URL of 100,000 characters on that host; a path block covers a long URL below it, and not one that climbs out of it', async () => {
    const dbPath = await synced(THREATS);
    const long = (prefix: string, tail = ''): string => `${prefix}${'x'.repeat(100_000)}${tail}`;
    const values = [
      long('https://deep.long-host.com/a/'),
      long('https://long-host.com/?q='),
      long('https://shared-forms.com/forms/abc/step/'),
      long('https://shared-forms.com/forms/abc/', '/../../../other'),
      long('https://shared-forms.com/other/'),
    ];
    const document = await lookupJson(dbPath, values);
    expect(document.results.map((result) => result.blocked)).toEqual([true, true, true, false, false]);
    expect(document.results[0]?.matches[0]?.match).toEqual({ by: 'expression', expression: 'long-host.com/' });
    expect(document.results[2]?.matches[0]?.match).toEqual({ by: 'expression', expression: 'shared-forms.com/forms/abc/' });
  });

  it('bare base58 and bech32 addresses match their chain-qualified threats (bech32 in either case)', async () => {
    const dbPath = await synced(THREATS);
    const document = await lookupJson(dbPath, [SOLANA, BECH32, BECH32.toUpperCase(), `${SOLANA.slice(0, -1)}V`]);
    expect(document.results.map((result) => [result.blocked, result.matches.map((match) => [match.id, match.match.by])])).toEqual([
      [true, [[3, 'address']]],
      [true, [[4, 'address']]],
      [true, [[4, 'address']]],
      [false, []],
    ]);
  });
});
