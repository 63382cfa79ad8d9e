import { describe, expect, it } from 'vitest';
import { apiKeyVariableFor, loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/lib/errors.js';
import { thrownMessage } from '../support/thrown.js';

const base = { THREAT_MIRROR_API_URL: 'http://127.0.0.1:9999', THREAT_MIRROR_API_KEY: 'k-secret-1' };
const noFiles = (path: string): string => {
  throw new Error(`ENOENT: ${path}`);
};

const configError = (env: Record<string, string>, readFile = noFiles): string => thrownMessage(() => loadConfig(env, readFile), ConfigError);

describe('loadConfig', () => {
  it('applies the documented defaults for one organization', () => {
    const config = loadConfig(base, noFiles);
    expect(config.organizations.map((o) => o.name)).toEqual(['default']);
    expect(config.organizations[0]?.apiKey.reveal()).toBe('k-secret-1');
    expect(config).toMatchObject({
      dbPath: './data/threat-mirror.db',
      initialDays: 30,
      lookbackDays: 2,
      logLevel: 'info',
      requestTimeoutMs: 30_000,
      concurrency: 4,
      schedule: '*/10 * * * *',
      httpPort: undefined,
      reports: false,
    });
  });

  it('reads several organizations with per-organization key variables and _FILE keys', () => {
    const config = loadConfig(
      { THREAT_MIRROR_API_URL: 'https://api.example.com/', THREAT_MIRROR_ORGS: 'acme, globex-eu', THREAT_MIRROR_API_KEY_ACME: 'a', THREAT_MIRROR_API_KEY_GLOBEX_EU_FILE: '/keys/globex' },
      (path) => (path === '/keys/globex' ? 'g-from-file\n' : noFiles(path)),
    );
    expect(config.apiUrl).toBe('https://api.example.com');
    expect(config.organizations.map((o) => [o.name, o.apiKey.reveal(), o.apiKeyVariable])).toEqual([
      ['acme', 'a', 'THREAT_MIRROR_API_KEY_ACME'],
      ['globex-eu', 'g-from-file', 'THREAT_MIRROR_API_KEY_GLOBEX_EU_FILE'],
    ]);
    expect(apiKeyVariableFor('globex.eu')).toBe('THREAT_MIRROR_API_KEY_GLOBEX_EU');
  });

  it('names the variable that is wrong', () => {
    expect(configError({ THREAT_MIRROR_API_KEY: 'k' })).toMatch(/^THREAT_MIRROR_API_URL: missing/);
    expect(configError({ ...base, THREAT_MIRROR_API_URL: 'ftp://x' })).toMatch(/^THREAT_MIRROR_API_URL: "ftp:\/\/x"/);
    expect(configError({ THREAT_MIRROR_API_URL: base.THREAT_MIRROR_API_URL })).toMatch(/^THREAT_MIRROR_API_KEY: missing/);
    expect(configError({ ...base, THREAT_MIRROR_INITIAL_DAYS: 'ten' })).toMatch(/^THREAT_MIRROR_INITIAL_DAYS: "ten" must be a whole number/);
    expect(configError({ ...base, THREAT_MIRROR_LOOKBACK_DAYS: '-1' })).toMatch(/^THREAT_MIRROR_LOOKBACK_DAYS: "-1" must be at least 0/);
    expect(configError({ ...base, THREAT_MIRROR_SCHEDULE: 'every minute' })).toMatch(/^THREAT_MIRROR_SCHEDULE:/);
    expect(configError({ ...base, LOG_LEVEL: 'loud' })).toMatch(/^LOG_LEVEL: "loud" must be one of/);
    expect(configError({ ...base, THREAT_MIRROR_NOW: 'noon' })).toMatch(/^THREAT_MIRROR_NOW:/);
    expect(configError({ THREAT_MIRROR_API_URL: base.THREAT_MIRROR_API_URL, THREAT_MIRROR_ORGS: 'acme' })).toMatch(/^THREAT_MIRROR_API_KEY_ACME: missing/);
    expect(configError({ ...base, THREAT_MIRROR_ORGS: 'acme', THREAT_MIRROR_API_KEY_ACME: 'a' })).toMatch(/^THREAT_MIRROR_API_KEY: not used when THREAT_MIRROR_ORGS is set/);
    expect(configError({ THREAT_MIRROR_API_URL: base.THREAT_MIRROR_API_URL, THREAT_MIRROR_ORGS: 'a-b,a_b', THREAT_MIRROR_API_KEY_A_B: 'x' })).toMatch(/both read their key from THREAT_MIRROR_API_KEY_A_B/);
    expect(configError({ THREAT_MIRROR_API_URL: base.THREAT_MIRROR_API_URL, THREAT_MIRROR_API_KEY_FILE: '/missing' })).toMatch(/^THREAT_MIRROR_API_KEY_FILE: cannot read \/missing/);
    expect(configError({ ...base, THREAT_MIRROR_ORG: 'has space' })).toMatch(/^THREAT_MIRROR_ORG: "has space" is not a valid organization name/);
  });

  it('never puts a key into a message, JSON or inspection', () => {
    const config = loadConfig(base, noFiles);
    expect(JSON.stringify(config)).not.toContain('k-secret-1');
    expect(String(config.organizations[0]?.apiKey)).toBe('[redacted]');
    expect(configError({ ...base, THREAT_MIRROR_API_KEY_FILE: '/k' })).not.toContain('k-secret-1');
  });

  it('reads the readers-and-replicas settings and names the variable of a bad one', () => {
    expect(loadConfig(base, noFiles)).toMatchObject({ checkpoints: 'auto', walStarvedSeconds: 1800, snapshotPath: undefined });
    expect(
      loadConfig({ ...base, THREAT_MIRROR_CHECKPOINTS: 'external', THREAT_MIRROR_WAL_STARVED_SECONDS: '60', THREAT_MIRROR_SNAPSHOT: '/data/s/m.db' }, noFiles),
    ).toMatchObject({ checkpoints: 'external', walStarvedSeconds: 60, snapshotPath: '/data/s/m.db' });
    expect(configError({ ...base, THREAT_MIRROR_CHECKPOINTS: 'never' })).toBe('THREAT_MIRROR_CHECKPOINTS: "never" must be one of auto, external');
    expect(configError({ ...base, THREAT_MIRROR_WAL_STARVED_SECONDS: '0' })).toBe('THREAT_MIRROR_WAL_STARVED_SECONDS: "0" must be at least 1');
  });

  it('gives Litestream only replicas it reads as meant, and refuses at once what it would misread at every start', () => {
    const replica = (env: Record<string, string>): { url: string; source: readonly string[] } | undefined => loadConfig({ ...base, THREAT_MIRROR_DB: '/data/m.db', ...env }, noFiles).replica;
    expect(replica({ THREAT_MIRROR_RESTORE_FROM: 's3://mirror/acme' })).toMatchObject({ url: 's3://mirror/acme', source: ['s3://mirror/acme'] });
    expect(replica({ THREAT_MIRROR_RESTORE_FROM: 's3://mirror.localhost:9000/acme' })?.source).toEqual(['s3://mirror.localhost:9000/acme']);
    // An absolute path is a file replica: Litestream 0.3 takes it for a database in /etc/litestream.yml.
    expect(replica({ THREAT_MIRROR_RESTORE_FROM: '/srv/replica' })?.source).toEqual(['file:///srv/replica']);
    const config = new URL(import.meta.url).pathname;
    expect(replica({ THREAT_MIRROR_RESTORE_CONFIG: config })).toMatchObject({ source: ['-config', config, '/data/m.db'] });
    const refused = (env: Record<string, string>): string => configError({ ...base, ...env });
    expect(refused({ THREAT_MIRROR_RESTORE_FROM: 'file:/srv/replica' })).toContain('is not a replica URL');
    expect(refused({ THREAT_MIRROR_RESTORE_FROM: 's3://' })).toBe('THREAT_MIRROR_RESTORE_FROM: "s3://" names no bucket');
    expect(refused({ THREAT_MIRROR_RESTORE_FROM: 'file://' })).toBe('THREAT_MIRROR_RESTORE_FROM: "file://" names no folder');
    expect(refused({ THREAT_MIRROR_RESTORE_FROM: 's3://mirror.minio:9000/acme' })).toContain('Litestream 0.3 reads an S3 endpoint from the URL only as BUCKET.localhost:PORT');
    expect(refused({ THREAT_MIRROR_RESTORE_FROM: 's3://mirror.127.0.0.1:9000/acme' })).toContain('THREAT_MIRROR_RESTORE_CONFIG');
    expect(refused({ THREAT_MIRROR_RESTORE_FROM: 's3://mirror/acme', THREAT_MIRROR_RESTORE_CONFIG: config })).toContain('not both');
    expect(refused({ THREAT_MIRROR_RESTORE_CONFIG: '/nonexistent/litestream.yml' })).toContain('THREAT_MIRROR_RESTORE_CONFIG: "/nonexistent/litestream.yml" is not the absolute path of a Litestream configuration file');
    expect(refused({ THREAT_MIRROR_RESTORE_FROM: 's3://mirror/acme', THREAT_MIRROR_LITESTREAM: '/nonexistent/litestream' })).toBe(
      'THREAT_MIRROR_LITESTREAM: "/nonexistent/litestream" is not an executable file',
    );
  });
});
