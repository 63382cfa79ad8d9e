// Reads and validates the environment into one readonly Config; a ConfigError names the variable.
import { ConfigError, errorMessage } from './lib/errors.js';
import { redact, registerSecret } from './lib/redact.js';
import { EXPORT_FORMATS, type ExportFormat, isExportFormat } from './export/export-formats.js';
import { readBoundedTextFile } from './lib/bounded-file.js';
import { Secret } from './lib/secret.js';
import { scheduleOf } from './lib/schedule.js';
import { DNS_VARIABLES, type DnsConfig, loadDnsConfig } from './dns/dns-config.js';
import { ALLOWLIST_VARIABLES, loadAllowlist } from './allowlist/allowlist-config.js';
import type { ReadAllowlist } from './allowlist/allowlist-file.js';
import { HTTP_TOKEN_VARIABLE, loadHttpToken } from './lib/http-token.js';
import { assertNotDatabaseFile } from './db/database-files.js';
import { filesBesideSnapshot } from './db/snapshot-files.js';

export interface OrganizationConfig {
  /** The label rows are stored under; also picks the key variable. */
  readonly name: string;
  readonly apiKey: Secret;
  /** Which variable the key came from, for messages (never the key itself). */
  readonly apiKeyVariable: string;
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  readonly apiUrl: string;
  /** Plain http:// to a host that is not loopback, allowed by THREAT_MIRROR_ALLOW_INSECURE_HTTP=1: warn at start. */
  readonly insecureHttp: boolean;
  readonly dbPath: string;
  readonly organizations: readonly OrganizationConfig[];
  readonly initialDays: number;
  readonly lookbackDays: number;
  readonly logLevel: LogLevel;
  readonly requestTimeoutMs: number;
  readonly maxRetries: number;
  readonly retryMinMs: number;
  readonly retryMaxMs: number;
  /** The longest Retry-After waited for; a longer one fails the organization's run. */
  readonly retryAfterMaxMs: number;
  readonly maxResponseBytes: number;
  readonly concurrency: number;
  readonly maxRequestsPerSecond: number | undefined;
  readonly schedule: string;
  readonly jitterSeconds: number;
  readonly httpPort: number | undefined;
  readonly httpHost: string;
  /** THREAT_MIRROR_HTTP_TOKEN (or _FILE): the bearer token /v1/* requires; undefined: /v1/* is open. */
  readonly httpToken: Secret | undefined;
  readonly reports: boolean;
  readonly reportsRecentDays: number;
  /** Every mirrored day is re-walked at least once in this many days (docs/reconciliation.md). */
  readonly reconcileDays: number;
  /** Requests a run may spend re-walking due days; 0 turns reconciliation off. */
  readonly reconcileMaxRequests: number;
  /** A fixed "now" for tests and replays; undefined means the system clock. */
  readonly fixedNow: Date | undefined;
  /** Files the daemon keeps current after every run (THREAT_MIRROR_EXPORTS). */
  readonly exports: ReadonlyArray<{ readonly format: ExportFormat; readonly path: string }>;
  /** auto: the writer thread checkpoints the WAL; external: a replicator (Litestream) does. */
  readonly checkpoints: CheckpointMode;
  /** /readyz turns 503 once checkpoints have been held off by a reader for longer than this. */
  readonly walStarvedSeconds: number;
  /** Where the daemon publishes a snapshot after every run that changed something; undefined: none. */
  readonly snapshotPath: string | undefined;
  /** The DNS primary of the response policy zone (THREAT_MIRROR_DNS_PORT); undefined: off. */
  readonly dns: DnsConfig | undefined;
  /** Without a terminal to draw on: seconds between `progress` log records of a run. */
  readonly progressSeconds: number;
  /** THREAT_MIRROR_ALLOWLIST as read at start (the daemon then follows the file); undefined: none. */
  readonly allowlist: ReadAllowlist | undefined;
}

export type CheckpointMode = 'auto' | 'external';
const CHECKPOINT_MODES = ['auto', 'external'] as const;

/**
 * 4 MiB, forty times a page of 100 long URLs. The CLI caps its heap (its shebang), and each
 * response in flight is held about three times over while it is read and parsed: with four in
 * flight, pages of 6 MB ran out of heap and aborted the process, pages of 4 MB did not (measured).
 * A larger page fails its request with a message instead.
 */
const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/** One row per variable: `--help` prints this table, so it is the documentation too. */
export const ENVIRONMENT_VARIABLES: ReadonlyArray<{ name: string; default: string; meaning: string }> = [
  { name: 'THREAT_MIRROR_API_URL', default: '(required)', meaning: 'Base URL of the service, e.g. https://api.example.com' },
  {
    name: 'THREAT_MIRROR_ALLOW_INSECURE_HTTP',
    default: '0',
    meaning: 'Set to 1 to allow an http:// THREAT_MIRROR_API_URL to a host that is not loopback (the key then travels unencrypted)',
  },
  { name: 'THREAT_MIRROR_DB', default: './data/threat-mirror.db', meaning: 'SQLite file to keep in sync (parent folder is created)' },
  { name: 'THREAT_MIRROR_API_KEY', default: '', meaning: 'API key of the single organization (or THREAT_MIRROR_API_KEY_FILE: a file holding it)' },
  { name: 'THREAT_MIRROR_ORG', default: 'default', meaning: 'Name stored for the single organization' },
  { name: 'THREAT_MIRROR_ORGS', default: '', meaning: 'Several organizations, e.g. acme,globex; keys in THREAT_MIRROR_API_KEY_ACME, …_GLOBEX (or …_FILE)' },
  { name: 'THREAT_MIRROR_INITIAL_DAYS', default: '30', meaning: "Days an organization's first run fetches (ending today)" },
  { name: 'THREAT_MIRROR_LOOKBACK_DAYS', default: '2', meaning: 'Closed days every incremental run re-scans, besides today (late arrivals, removals)' },
  { name: 'THREAT_MIRROR_CONCURRENCY', default: '4', meaning: 'Requests in flight at once per API key' },
  { name: 'THREAT_MIRROR_MAX_RPS', default: '(none)', meaning: 'Optional cap on requests per second per API key' },
  { name: 'THREAT_MIRROR_REQUEST_TIMEOUT_MS', default: '30000', meaning: 'Timeout of one HTTP request' },
  { name: 'THREAT_MIRROR_MAX_RETRIES', default: '6', meaning: 'Retries of one request on network errors, timeouts, 408, 429 and 5xx' },
  { name: 'THREAT_MIRROR_RETRY_MIN_MS', default: '500', meaning: 'First backoff delay (doubles each retry, with jitter)' },
  { name: 'THREAT_MIRROR_RETRY_MAX_MS', default: '30000', meaning: 'Longest backoff delay' },
  {
    name: 'THREAT_MIRROR_RETRY_AFTER_MAX_MS',
    default: '300000',
    meaning: "Longest Retry-After (429/503) waited for; a service asking for longer fails that organization's run with a message, and the next run tries again",
  },
  {
    name: 'THREAT_MIRROR_MAX_RESPONSE_BYTES',
    default: String(DEFAULT_MAX_RESPONSE_BYTES),
    meaning: 'A larger response body is treated as a failed (retryable) request; see the README before raising it',
  },
  { name: 'THREAT_MIRROR_SCHEDULE', default: '*/10 * * * *', meaning: 'Cron expression (UTC) of the daemon' },
  { name: 'THREAT_MIRROR_JITTER_SECONDS', default: '0', meaning: 'Random delay before each scheduled run, so a fleet does not hit the service at once' },
  { name: 'THREAT_MIRROR_HTTP_PORT', default: '(off)', meaning: 'Serve /healthz, /readyz, /metrics and /v1/lookup on this port' },
  { name: 'THREAT_MIRROR_HTTP_HOST', default: '127.0.0.1', meaning: 'Address the HTTP endpoints bind to' },
  {
    name: 'THREAT_MIRROR_HTTP_TOKEN',
    default: '(none)',
    meaning: '/v1/* then requires "Authorization: Bearer TOKEN" (16+ characters; or THREAT_MIRROR_HTTP_TOKEN_FILE: a file holding it); probes and /metrics stay open',
  },
  { name: 'THREAT_MIRROR_REPORTS', default: '0', meaning: 'Set to 1 to also mirror GET /organization/reports and their proposals' },
  { name: 'THREAT_MIRROR_REPORTS_RECENT_DAYS', default: '30', meaning: 'Days of reports every incremental run re-reads (their statuses change after filing)' },
  { name: 'THREAT_MIRROR_RECONCILE_DAYS', default: '7', meaning: 'Every mirrored day is re-walked (removals, changes) at least once in this many days; 0: every run' },
  { name: 'THREAT_MIRROR_RECONCILE_MAX_REQUESTS', default: '20', meaning: 'Requests a run may spend per organization re-walking due days, after its incremental range; 0 turns it off' },
  {
    name: 'THREAT_MIRROR_EXPORTS',
    default: '(none)',
    meaning: `Export files the daemon rewrites (atomically) after each run that changed them, format=path pairs, e.g. rpz=/data/threats.rpz,hosts=/data/hosts.txt; formats: ${EXPORT_FORMATS.join(', ')}`,
  },
  {
    name: 'THREAT_MIRROR_CHECKPOINTS',
    default: 'auto',
    meaning: 'auto: the writer folds the WAL into the file; external: leave it to a replicator such as Litestream (docs/readers-and-replicas.md)',
  },
  { name: 'THREAT_MIRROR_WAL_STARVED_SECONDS', default: '1800', meaning: '/readyz reports a reason once readers have kept WAL checkpoints from completing this long' },
  { name: 'THREAT_MIRROR_SNAPSHOT', default: '(off)', meaning: 'Daemon: publish a compacted copy here (and FILE.json) after every run that changed something' },
  ...DNS_VARIABLES,
  ...ALLOWLIST_VARIABLES,
  { name: 'THREAT_MIRROR_PROGRESS_SECONDS', default: '30', meaning: 'Seconds between "progress" log records of a run when stderr is no terminal (or NO_COLOR / TERM=dumb)' },
  { name: 'THREAT_MIRROR_NOW', default: '(system clock)', meaning: 'Fix the clock (ISO timestamp), for tests and replays' },
  { name: 'LOG_LEVEL', default: 'info', meaning: 'fatal, error, warn, info, debug, trace or silent' },
];

export type Environment = Readonly<Record<string, string | undefined>>;
export type FileReader = (path: string) => string;

/** Regular files of at most 64 KiB only (src/lib/bounded-file.ts). */
const readTextFile: FileReader = (path) => readBoundedTextFile(path);

const ORGANIZATION_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The key variable of an organization: the name upper-cased, anything not alphanumeric as `_`. */
export function apiKeyVariableFor(organization: string): string {
  return `THREAT_MIRROR_API_KEY_${organization.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/** For the read-only commands (status, lookup): they need the file, not the service. */
export function loadDatabasePath(env: Environment): string {
  return value(env, 'THREAT_MIRROR_DB') ?? './data/threat-mirror.db';
}

/**
 * Tells the redaction point every secret the environment holds, before anything can fail: the
 * keys and the HTTP token given directly and any credentials in THREAT_MIRROR_API_URL. Those read
 * from files register themselves when loadConfig reads them (Secret).
 */
export function registerSecretsOf(env: Environment): void {
  for (const [name, raw] of Object.entries(env)) {
    const secret = name === HTTP_TOKEN_VARIABLE || (/^THREAT_MIRROR_API_KEY(_[A-Z0-9_]*)?$/.test(name) && !name.endsWith('_FILE'));
    if (raw === undefined || !secret) continue;
    registerSecret(raw);
    registerSecret(raw.trim());
  }
  const credentials = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)@/i.exec(env.THREAT_MIRROR_API_URL?.trim() ?? '')?.[1];
  if (credentials === undefined) return;
  // The password, or a token given alone; a user name next to a password is no secret.
  const colon = credentials.indexOf(':');
  for (const part of [credentials, colon < 0 ? credentials : credentials.slice(colon + 1)]) {
    registerSecret(part);
    registerSecret(safeDecode(part));
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

export function loadConfig(env: Environment, readFile: FileReader = readTextFile): Config {
  const apiUrl = loadApiUrl(env);
  const fixedNowText = value(env, 'THREAT_MIRROR_NOW');
  const fixedNow = fixedNowText === undefined ? undefined : new Date(fixedNowText);
  if (fixedNow !== undefined && Number.isNaN(fixedNow.getTime())) {
    throw new ConfigError(`THREAT_MIRROR_NOW: "${fixedNowText}" is not an ISO timestamp`);
  }
  const schedule = scheduleOf(env);
  const retryMinMs = integer(env, 'THREAT_MIRROR_RETRY_MIN_MS', 500, 1, 3_600_000);
  const retryMaxMs = integer(env, 'THREAT_MIRROR_RETRY_MAX_MS', 30_000, 1, 3_600_000);
  if (retryMaxMs < retryMinMs) {
    throw new ConfigError(`THREAT_MIRROR_RETRY_MAX_MS: ${retryMaxMs} is below THREAT_MIRROR_RETRY_MIN_MS (${retryMinMs})`);
  }
  const httpPortText = value(env, 'THREAT_MIRROR_HTTP_PORT');
  const maxRpsText = value(env, 'THREAT_MIRROR_MAX_RPS');
  const dbPath = loadDatabasePath(env);
  return Object.freeze({
    apiUrl: apiUrl.replace(/\/+$/, ''),
    insecureHttp: new URL(apiUrl).protocol === 'http:' && !isLoopback(new URL(apiUrl).hostname),
    dbPath,
    organizations: Object.freeze(loadOrganizations(env, readFile)),
    initialDays: integer(env, 'THREAT_MIRROR_INITIAL_DAYS', 30, 1, 36_500),
    lookbackDays: integer(env, 'THREAT_MIRROR_LOOKBACK_DAYS', 2, 0, 3_650),
    logLevel: parseVariable(env, 'LOG_LEVEL', 'info', oneOf(LOG_LEVELS)),
    requestTimeoutMs: integer(env, 'THREAT_MIRROR_REQUEST_TIMEOUT_MS', 30_000, 1, 3_600_000),
    maxRetries: integer(env, 'THREAT_MIRROR_MAX_RETRIES', 6, 0, 100),
    retryMinMs,
    retryMaxMs,
    retryAfterMaxMs: integer(env, 'THREAT_MIRROR_RETRY_AFTER_MAX_MS', 300_000, 1, 86_400_000),
    maxResponseBytes: integer(env, 'THREAT_MIRROR_MAX_RESPONSE_BYTES', DEFAULT_MAX_RESPONSE_BYTES, 1024, 1024 * 1024 * 1024),
    concurrency: integer(env, 'THREAT_MIRROR_CONCURRENCY', 4, 1, 64),
    maxRequestsPerSecond: maxRpsText === undefined ? undefined : number(env, 'THREAT_MIRROR_MAX_RPS', 0.01, 10_000),
    schedule,
    jitterSeconds: integer(env, 'THREAT_MIRROR_JITTER_SECONDS', 0, 0, 86_400),
    httpPort: httpPortText === undefined ? undefined : integer(env, 'THREAT_MIRROR_HTTP_PORT', 0, 0, 65_535),
    httpHost: value(env, 'THREAT_MIRROR_HTTP_HOST') ?? '127.0.0.1',
    httpToken: loadHttpToken(env, readFile),
    reports: boolean(env, 'THREAT_MIRROR_REPORTS', false),
    reportsRecentDays: integer(env, 'THREAT_MIRROR_REPORTS_RECENT_DAYS', 30, 1, 3_650),
    reconcileDays: integer(env, 'THREAT_MIRROR_RECONCILE_DAYS', 7, 0, 3_650),
    reconcileMaxRequests: integer(env, 'THREAT_MIRROR_RECONCILE_MAX_REQUESTS', 20, 0, 1_000_000),
    fixedNow,
    exports: Object.freeze(loadExports(env, dbPath)),
    checkpoints: parseVariable(env, 'THREAT_MIRROR_CHECKPOINTS', 'auto', oneOf(CHECKPOINT_MODES)),
    walStarvedSeconds: integer(env, 'THREAT_MIRROR_WAL_STARVED_SECONDS', 1800, 1, 31_536_000),
    snapshotPath: assertNotDatabaseFile('THREAT_MIRROR_SNAPSHOT', value(env, 'THREAT_MIRROR_SNAPSHOT'), dbPath, filesBesideSnapshot),
    dns: loadDnsConfig(env, (name, fallback, min, max) => integer(env, name, fallback, min, max)),
    progressSeconds: value(env, 'THREAT_MIRROR_PROGRESS_SECONDS') === undefined ? 30 : number(env, 'THREAT_MIRROR_PROGRESS_SECONDS', 0.1, 86_400),
    allowlist: loadAllowlist(env),
  });
}

/** `rpz=/data/threats.rpz,hosts=/data/hosts.txt`: each file once, each format as often as wanted. */
function loadExports(env: Environment, dbPath: string): Array<{ format: ExportFormat; path: string }> {
  const list = value(env, 'THREAT_MIRROR_EXPORTS');
  if (list === undefined) return [];
  const seen = new Set<string>();
  return list.split(',').map((pair) => pair.trim()).filter((pair) => pair !== '').map((pair) => {
    const equals = pair.indexOf('=');
    const format = pair.slice(0, equals).trim();
    const path = pair.slice(equals + 1).trim();
    if (equals < 0 || path === '') throw new ConfigError(`THREAT_MIRROR_EXPORTS: "${pair}" is not format=path`);
    if (!isExportFormat(format)) throw new ConfigError(`THREAT_MIRROR_EXPORTS: "${format}" is not a format; formats are ${EXPORT_FORMATS.join(', ')}`);
    if (seen.has(path)) throw new ConfigError(`THREAT_MIRROR_EXPORTS: ${path} is listed twice`);
    assertNotDatabaseFile('THREAT_MIRROR_EXPORTS', path, dbPath);
    seen.add(path);
    return { format, path };
  });
}

/**
 * The base URL, refused when it would leak: credentials in it (they would be printed in messages
 * and are not how the service authenticates), or plain HTTP to a host that is not loopback (the
 * key travels in a header) unless THREAT_MIRROR_ALLOW_INSECURE_HTTP=1.
 */
function loadApiUrl(env: Environment): string {
  const raw = value(env, 'THREAT_MIRROR_API_URL');
  if (raw !== undefined && /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(raw)) {
    throw new ConfigError(
      `THREAT_MIRROR_API_URL: must not contain credentials (user:password@), found in ${redact(raw)}; the service authenticates with the API key (THREAT_MIRROR_API_KEY…), so remove them from the URL`,
    );
  }
  const apiUrl = parseVariable(env, 'THREAT_MIRROR_API_URL', undefined, httpUrl);
  const url = new URL(apiUrl);
  if (url.protocol === 'http:' && !isLoopback(url.hostname) && !boolean(env, 'THREAT_MIRROR_ALLOW_INSECURE_HTTP', false)) {
    throw new ConfigError(
      `THREAT_MIRROR_API_URL: plain http:// to ${url.hostname}, which is not a loopback address, would send the API key unencrypted; use https://, or set THREAT_MIRROR_ALLOW_INSECURE_HTTP=1 to accept that`,
    );
  }
  return apiUrl;
}

/**
 * `localhost` and literal loopback addresses (127.0.0.0/8, ::1): traffic that never leaves the
 * machine. Not `*.localhost`: glibc sends those names to DNS, which may answer any address.
 * `hostname` is a WHATWG URL's (lower-case, an IPv4 address in dotted form, IPv6 compressed).
 */
export function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host === '[::1]' || host === '::1') return true;
  const octets = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  return octets !== null && octets.slice(1).every((octet) => Number(octet) <= 255);
}

function loadOrganizations(env: Environment, readFile: FileReader): OrganizationConfig[] {
  const list = value(env, 'THREAT_MIRROR_ORGS');
  if (list === undefined) {
    const name = value(env, 'THREAT_MIRROR_ORG') ?? 'default';
    assertOrganizationName(name, 'THREAT_MIRROR_ORG');
    return [{ name, ...readApiKey(env, 'THREAT_MIRROR_API_KEY', readFile) }];
  }
  for (const conflicting of ['THREAT_MIRROR_API_KEY', 'THREAT_MIRROR_API_KEY_FILE', 'THREAT_MIRROR_ORG']) {
    if (value(env, conflicting) !== undefined) {
      throw new ConfigError(`${conflicting}: not used when THREAT_MIRROR_ORGS is set; give each organization its own THREAT_MIRROR_API_KEY_<NAME>`);
    }
  }
  const names = list.split(',').map((name) => name.trim()).filter((name) => name !== '');
  if (names.length === 0) throw new ConfigError('THREAT_MIRROR_ORGS: lists no organization');
  const byVariable = new Map<string, string>();
  return names.map((name) => {
    assertOrganizationName(name, 'THREAT_MIRROR_ORGS');
    const variable = apiKeyVariableFor(name);
    const clash = byVariable.get(variable);
    if (clash !== undefined) {
      throw new ConfigError(`THREAT_MIRROR_ORGS: "${clash}" and "${name}" both read their key from ${variable}; rename one`);
    }
    byVariable.set(variable, name);
    return { name, ...readApiKey(env, variable, readFile) };
  });
}

function readApiKey(env: Environment, variable: string, readFile: FileReader): { apiKey: Secret; apiKeyVariable: string } {
  const direct = value(env, variable);
  const fileVariable = `${variable}_FILE`;
  const file = value(env, fileVariable);
  if (direct !== undefined && file !== undefined) {
    throw new ConfigError(`${variable}: set either ${variable} or ${fileVariable}, not both`);
  }
  if (direct !== undefined) return { apiKey: new Secret(direct), apiKeyVariable: variable };
  if (file === undefined) {
    throw new ConfigError(`${variable}: missing; set it to the organization's API key, or ${fileVariable} to a file holding it`);
  }
  let contents: string;
  try {
    contents = readFile(file);
  } catch (error) {
    throw new ConfigError(`${fileVariable}: cannot read ${file}: ${errorMessage(error)}`);
  }
  const key = contents.trim();
  if (key === '') throw new ConfigError(`${fileVariable}: ${file} is empty`);
  return { apiKey: new Secret(key), apiKeyVariable: fileVariable };
}

function assertOrganizationName(name: string, variable: string): void {
  if (!ORGANIZATION_NAME.test(name)) {
    throw new ConfigError(`${variable}: "${name}" is not a valid organization name (letters, digits, '.', '_' or '-', up to 64 characters)`);
  }
}

/** An unset or blank variable counts as absent, as shells and compose files often leave them empty. */
function value(env: Environment, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

/**
 * Reads a value: returns it, or throws an InvalidValue whose message completes `NAME: "raw" …`.
 * Hand-written rather than a schema library: eight checks did not need one, and loading zod (95
 * modules) was ~70 ms of every run's start-up, before its first request (docs/performance.md).
 */
type Parse<T> = (raw: string) => T;

class InvalidValue extends Error {}

function parseVariable<T>(env: Environment, name: string, fallback: T | undefined, parse: Parse<T>): T {
  const raw = value(env, name);
  if (raw === undefined) {
    if (fallback === undefined) throw new ConfigError(`${name}: missing; it is required`);
    return fallback;
  }
  try {
    return parse(raw);
  } catch (error) {
    if (error instanceof InvalidValue) throw new ConfigError(`${name}: "${raw}" ${error.message}`);
    throw error;
  }
}

function oneOf<const T extends string>(choices: readonly T[]): Parse<T> {
  return (raw) => {
    const choice = choices.find((candidate) => candidate === raw);
    if (choice === undefined) throw new InvalidValue(`must be one of ${choices.join(', ')}`);
    return choice;
  };
}

function httpUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new InvalidValue('must be an http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidValue('must be an http:// or https:// URL');
  return raw;
}

/** A finite decimal number (as Number() reads it) within [min, max]; `whole` also refuses fractions. */
function numberWithin(min: number, max: number, whole: boolean): Parse<number> {
  const kind = whole ? 'a whole number' : 'a number';
  return (raw) => {
    const parsed = Number(raw);
    if (!Number.isFinite(parsed) || (whole && !Number.isInteger(parsed))) throw new InvalidValue(`must be ${kind}`);
    if (parsed < min) throw new InvalidValue(`must be at least ${min}`);
    if (parsed > max) throw new InvalidValue(`must be at most ${max}`);
    return parsed;
  };
}

function integer(env: Environment, name: string, fallback: number, min: number, max: number): number {
  return parseVariable(env, name, fallback, numberWithin(min, max, true));
}

function number(env: Environment, name: string, min: number, max: number): number {
  return parseVariable(env, name, undefined, numberWithin(min, max, false));
}

function boolean(env: Environment, name: string, fallback: boolean): boolean {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name}: "${raw}" must be 1/true/yes/on or 0/false/no/off`);
}
