// Reads and validates the environment into one readonly Config; a ConfigError names the variable.
// Each variable, its default and its meaning: config/variables.ts; its reading, beside it in config/.
import { resolve } from 'node:path';
import { readBoundedTextFile } from './lib/bounded-file.js';
import { ConfigError } from './lib/errors.js';
import type { Secret } from './lib/secret.js';
import type { Allowlist } from './allowlist/allowlist-entries.js';
import type { ReadAllowlist } from './allowlist/allowlist-file.js';
import { loadAllowlist } from './config/allowlist.js';
import { type DnsConfig, loadDnsConfig, loadZoneTimers } from './config/dns.js';
import type { ExportTarget } from './config/outputs.js';
import { loadExports, loadSnapshotPath } from './config/outputs.js';
import { loadHttpToken } from './config/http-token.js';
import { loadReplica, type ReplicaConfig } from './config/replica.js';
import { type Environment, type FileReader, value } from './config/read.js';
import { loadApiUrl, loadOrganizationNames, loadOrganizations, type OrganizationConfig } from './config/service.js';
import * as variables from './config/variables.js';
import type { ZoneTimers } from './lib/rpz-zone.js';
import { clockStartingAt, dayOf } from './lib/days.js';

export type { Environment, FileReader } from './config/read.js';
export { apiKeyVariableFor, isLoopback, type OrganizationConfig, registerSecretsOf } from './config/service.js';
export { ENVIRONMENT_VARIABLES } from './config/variables.js';
export { undocumentedAssetTypes } from './config/asset-types.js';

export type LogLevel = (typeof variables.LOG_LEVELS)[number];
export type CheckpointMode = (typeof variables.CHECKPOINT_MODES)[number];

export interface Config {
  readonly apiUrl: string;
  /** Plain http:// to a host that is not loopback, allowed by THREAT_MIRROR_ALLOW_INSECURE_HTTP=1: warn at start. */
  readonly insecureHttp: boolean;
  readonly dbPath: string;
  readonly organizations: readonly OrganizationConfig[];
  readonly initialDays: number;
  /** THREAT_MIRROR_HISTORY_FROM: the first day the mirror must hold; undefined: the last initialDays days. */
  readonly historyFrom: string | undefined;
  /** Requests a run may spend per organization on the days before the mirrored range; 0: none. */
  readonly historyMaxRequests: number;
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
  /** Fresh lookups over HTTP: requests per second per key at most. */
  readonly freshMaxRps: number;
  readonly reports: boolean;
  readonly reportsRecentDays: number;
  /** Every mirrored day is re-walked at least once in this many days (docs/reconciliation.md). */
  readonly reconcileDays: number;
  /** Requests a run may spend re-walking due days; 0 turns reconciliation off. */
  readonly reconcileMaxRequests: number;
  /** A fixed "now" for tests and replays; undefined means the system clock. */
  readonly fixedNow: Date | undefined;
  /** Files the daemon keeps current after every run (THREAT_MIRROR_EXPORTS). */
  readonly exports: readonly ExportTarget[];
  /** auto: the writer thread checkpoints the WAL; external: a replicator (Litestream) does. */
  readonly checkpoints: CheckpointMode;
  /** /readyz turns 503 once checkpoints have been held off by a reader for longer than this. */
  readonly walStarvedSeconds: number;
  /** THREAT_MIRROR_RESTORE_FROM: the replica a writer restores a missing file from; undefined: none. */
  readonly replica: ReplicaConfig | undefined;
  /** Where the daemon publishes a snapshot after every run that changed something; undefined: none. */
  readonly snapshotPath: string | undefined;
  /** The DNS primary of the response policy zone (THREAT_MIRROR_DNS_PORT); undefined: off. */
  readonly dns: DnsConfig | undefined;
  /** Without a terminal to draw on: seconds between `progress` log records of a run. */
  readonly progressSeconds: number;
  /** THREAT_MIRROR_ALLOWLIST as read at start (the daemon then follows the file); undefined: none. */
  readonly allowlist: ReadAllowlist | undefined;
}

/**
 * What status and lookup judge with, read once by the entry: the file, the organizations configured
 * (else every one the file holds) and the writer's clock. A read command reads only the variables it
 * uses: a broken THREAT_MIRROR_ALLOWLIST or service URL does not stop `status`.
 */
export interface ReadConfig {
  readonly dbPath: string;
  /** THREAT_MIRROR_ORG / THREAT_MIRROR_ORGS; undefined: every organization the file holds. */
  readonly organizationNames: readonly string[] | undefined;
  /** THREAT_MIRROR_NOW: freshness is judged on the writer's clock. */
  readonly fixedNow: Date | undefined;
}

export interface LookupConfig extends ReadConfig {
  /** THREAT_MIRROR_ALLOWLIST as read now: what it allows is named but not blocked. */
  readonly allowlist: Allowlist | undefined;
  /** `lookup --fresh`: the whole configuration (the service's URL and keys); undefined otherwise. */
  readonly service: Config | undefined;
}

export interface ExportConfig {
  readonly dbPath: string;
  /** THREAT_MIRROR_ALLOWLIST as read now: what it allows is left out (and counted). */
  readonly allowlist: Allowlist | undefined;
  /** The RPZ zone's SOA timers, fitted to THREAT_MIRROR_SCHEDULE as the daemon's zone has them. */
  readonly zoneTimers: ZoneTimers;
}

export function loadStatusConfig(env: Environment): ReadConfig {
  return { dbPath: loadDatabasePath(env), organizationNames: loadOrganizationNames(env), fixedNow: loadFixedNow(env) };
}

export function loadLookupConfig(env: Environment, fresh: boolean): LookupConfig {
  if (!fresh) return { allowlist: loadAllowlist(env)?.list, ...loadStatusConfig(env), service: undefined };
  // A fresh lookup needs the service's URL and keys: a bad one exits 2 before anything is read.
  const service = loadConfig(env);
  const organizationNames = service.organizations.map((organization) => organization.name);
  return { dbPath: service.dbPath, organizationNames, fixedNow: service.fixedNow, allowlist: service.allowlist?.list, service };
}

export function loadExportConfig(env: Environment): ExportConfig {
  const dbPath = loadDatabasePath(env);
  const zoneTimers = loadZoneTimers(env);
  return { dbPath, zoneTimers, allowlist: loadAllowlist(env)?.list };
}

/** Regular files of at most 64 KiB only (src/lib/bounded-file.ts). */
const readTextFile: FileReader = (path) => readBoundedTextFile(path);

/** For the read-only commands (snapshot, and the others' configurations): they need the file, not the service. */
export function loadDatabasePath(env: Environment): string {
  return variables.DB.read(env);
}

export function loadConfig(env: Environment, readFile: FileReader = readTextFile): Config {
  // In the order they were always checked: the first wrong variable is the one named.
  const { apiUrl, insecure } = loadApiUrl(env);
  const fixedNow = loadFixedNow(env);
  const schedule = variables.SCHEDULE.read(env);
  const retry = retryDelays(env);
  const dbPath = loadDatabasePath(env);
  return Object.freeze({
    apiUrl,
    insecureHttp: insecure,
    dbPath,
    organizations: Object.freeze(loadOrganizations(env, readFile)),
    initialDays: variables.INITIAL_DAYS.read(env),
    historyFrom: loadHistoryFrom(env, fixedNow),
    historyMaxRequests: variables.HISTORY_MAX_REQUESTS.read(env),
    lookbackDays: variables.LOOKBACK_DAYS.read(env),
    logLevel: variables.LOG_LEVEL.read(env),
    requestTimeoutMs: variables.REQUEST_TIMEOUT_MS.read(env),
    maxRetries: variables.MAX_RETRIES.read(env),
    ...retry,
    retryAfterMaxMs: variables.RETRY_AFTER_MAX_MS.read(env),
    maxResponseBytes: variables.MAX_RESPONSE_BYTES.read(env),
    concurrency: variables.CONCURRENCY.read(env),
    maxRequestsPerSecond: variables.MAX_RPS.read(env),
    schedule,
    jitterSeconds: variables.JITTER_SECONDS.read(env),
    httpPort: variables.HTTP_PORT.read(env),
    httpHost: variables.HTTP_HOST.read(env),
    httpToken: loadHttpToken(env, readFile),
    freshMaxRps: variables.FRESH_MAX_RPS.read(env),
    reports: variables.REPORTS.read(env),
    reportsRecentDays: variables.REPORTS_RECENT_DAYS.read(env),
    reconcileDays: variables.RECONCILE_DAYS.read(env),
    reconcileMaxRequests: variables.RECONCILE_MAX_REQUESTS.read(env),
    fixedNow,
    exports: Object.freeze(loadExports(env, dbPath)),
    checkpoints: variables.CHECKPOINTS.read(env),
    walStarvedSeconds: variables.WAL_STARVED_SECONDS.read(env),
    replica: loadReplica(env, resolve(dbPath)),
    snapshotPath: loadSnapshotPath(env, dbPath),
    dns: loadDnsConfig(env, readFile),
    progressSeconds: variables.PROGRESS_SECONDS.read(env),
    allowlist: loadAllowlist(env),
  });
}

/**
 * A start after today is a mistake (a year typed wrong), not a wish: the first run would mirror
 * today alone and the history walk nothing, while `status` said "synced and fresh". Today by the
 * writer's clock (THREAT_MIRROR_NOW, else the system's).
 */
function loadHistoryFrom(env: Environment, fixedNow: Date | undefined): string | undefined {
  const historyFrom = variables.HISTORY_FROM.read(env);
  const today = dayOf(clockStartingAt(fixedNow)());
  if (historyFrom !== undefined && historyFrom > today) {
    throw new ConfigError(`${variables.HISTORY_FROM.name}: "${historyFrom}" is after today (${today}, UTC): it is the first day the mirror must hold, so the mirror would hold nothing before today`);
  }
  return historyFrom;
}

/** THREAT_MIRROR_NOW, for the read commands too: they judge freshness on the writer's clock. */
function loadFixedNow(env: Environment): Date | undefined {
  const text = value(env, variables.NOW.name);
  const fixedNow = text === undefined ? undefined : new Date(text);
  if (fixedNow !== undefined && Number.isNaN(fixedNow.getTime())) throw new ConfigError(`${variables.NOW.name}: "${text}" is not an ISO timestamp`);
  return fixedNow;
}

function retryDelays(env: Environment): { retryMinMs: number; retryMaxMs: number } {
  const retryMinMs = variables.RETRY_MIN_MS.read(env);
  const retryMaxMs = variables.RETRY_MAX_MS.read(env);
  if (retryMaxMs < retryMinMs) throw new ConfigError(`${variables.RETRY_MAX_MS.name}: ${retryMaxMs} is below ${variables.RETRY_MIN_MS.name} (${retryMinMs})`);
  return { retryMinMs, retryMaxMs };
}
