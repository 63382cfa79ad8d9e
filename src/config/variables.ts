// Every variable the program reads, its default and what it means: `--help` prints this table, so
// it is the documentation too, and the defaults loadConfig applies are the ones written here.
import { validate as isCronExpression } from 'node-cron';
import { POLL_MS } from '../allowlist/allowlist-watcher.js';
import { ConfigError } from '../lib/errors.js';
import { EXPORT_FORMATS } from './export-formats.js';
import { isDay } from '../lib/days.js';
import { choice, decimal, InvalidValue, numberWithin, onOff, optionalNumber, parseVariable, type Setting, text, value, type Variable, wholeNumber } from './read.js';

/**
 * 4 MiB, forty times a page of 100 long URLs. The CLI caps its heap (its shebang), and each
 * response in flight is held about three times over while it is read and parsed: with four in
 * flight, pages of 6 MB ran out of heap and aborted the process, pages of 4 MB did not (measured).
 * A larger page fails its request with a message instead.
 */
const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const CHECKPOINT_MODES = ['auto', 'external'] as const;

export const API_URL: Variable = { name: 'THREAT_MIRROR_API_URL', default: '(required)', meaning: 'Base URL of the service, e.g. https://api.example.com' };
export const ALLOW_INSECURE_HTTP = onOff('THREAT_MIRROR_ALLOW_INSECURE_HTTP', false, 'Set to 1 to allow an http:// THREAT_MIRROR_API_URL to a host that is not loopback (the key then travels unencrypted)');
export const DB = text('THREAT_MIRROR_DB', './data/threat-mirror.db', 'SQLite file to keep in sync (parent folder is created)');
export const API_KEY: Variable = { name: 'THREAT_MIRROR_API_KEY', default: '', meaning: 'API key of the single organization (or THREAT_MIRROR_API_KEY_FILE: a file holding it)' };
export const ORG = text('THREAT_MIRROR_ORG', 'default', 'Name stored for the single organization');
export const ORGS: Variable = { name: 'THREAT_MIRROR_ORGS', default: '', meaning: 'Several organizations, e.g. acme,globex; keys in THREAT_MIRROR_API_KEY_ACME, …_GLOBEX (or …_FILE)' };
const ASSET_TYPES_MEANING = 'Asset types to mirror, e.g. URL,PAGE; THREAT_MIRROR_ASSET_TYPES_<NAME> for one organization (suffix as for keys). Each request then carries assetType';
export const ASSET_TYPES: Variable = { name: 'THREAT_MIRROR_ASSET_TYPES', default: '(every type)', meaning: ASSET_TYPES_MEANING };
export const INITIAL_DAYS = wholeNumber('THREAT_MIRROR_INITIAL_DAYS', 30, [1, 36_500], "Days an organization's first run fetches (ending today)");
/** A UTC day, or undefined: the last THREAT_MIRROR_INITIAL_DAYS days, moving with today (docs/configuration.md). */
export const HISTORY_FROM: Setting<string | undefined> = {
  name: 'THREAT_MIRROR_HISTORY_FROM',
  default: '(the last THREAT_MIRROR_INITIAL_DAYS days)',
  meaning: 'First UTC day (YYYY-MM-DD) the mirror must hold: after its incremental runs the daemon (and --once) walks the days it lacks, newest first; earlier later extends it, later keeps what is mirrored',
  read(env) {
    return value(env, this.name) === undefined
      ? undefined
      : parseVariable(env, this.name, undefined, (raw) => {
          if (!isDay(raw)) throw new InvalidValue('must be a UTC day, YYYY-MM-DD');
          return raw;
        });
  },
};
export const HISTORY_MAX_REQUESTS: Setting<number> = {
  name: 'THREAT_MIRROR_HISTORY_MAX_REQUESTS',
  default: '1000',
  meaning: 'Requests a run may spend per organization walking the days before the mirrored range that THREAT_MIRROR_HISTORY_FROM asks for; 0 turns the walk off, else at least 2',
  read(env) {
    return parseVariable(env, this.name, 1000, (raw) => {
      const requests = numberWithin(0, 1_000_000, true)(raw);
      // A day a run cuts short costs the next run one request to check where it stopped
      // (sync/history.ts): with one request a run, a day of more than a page is never walked.
      if (requests === 1) throw new InvalidValue('must be 0 (no history walk) or at least 2: a day a run cuts short costs the next run one request to check where it stopped, so 1 would never get past a day of more than 100 threats');
      return requests;
    });
  },
};
export const LOOKBACK_DAYS = wholeNumber('THREAT_MIRROR_LOOKBACK_DAYS', 2, [0, 3_650], 'Closed days every incremental run re-scans, besides today (late arrivals, removals)');
export const CONCURRENCY = wholeNumber('THREAT_MIRROR_CONCURRENCY', 4, [1, 64], 'Requests in flight at once per API key');
export const MAX_RPS = optionalNumber('THREAT_MIRROR_MAX_RPS', '(none)', [0.01, 10_000], 'Optional cap on requests per second per API key', false);
export const REQUEST_TIMEOUT_MS = wholeNumber('THREAT_MIRROR_REQUEST_TIMEOUT_MS', 30_000, [1, 3_600_000], 'Timeout of one HTTP request');
export const MAX_RETRIES = wholeNumber('THREAT_MIRROR_MAX_RETRIES', 6, [0, 100], 'Retries of one request on network errors, timeouts, 408, 429 and 5xx');
export const RETRY_MIN_MS = wholeNumber('THREAT_MIRROR_RETRY_MIN_MS', 500, [1, 3_600_000], 'First backoff delay (doubles each retry, with jitter)');
export const RETRY_MAX_MS = wholeNumber('THREAT_MIRROR_RETRY_MAX_MS', 30_000, [1, 3_600_000], 'Longest backoff delay');
export const RETRY_AFTER_MAX_MS = wholeNumber('THREAT_MIRROR_RETRY_AFTER_MAX_MS', 300_000, [1, 86_400_000], "Longest Retry-After (429/503) waited for; a service asking for longer fails that organization's run with a message, and the next run tries again");
export const MAX_RESPONSE_BYTES = wholeNumber('THREAT_MIRROR_MAX_RESPONSE_BYTES', DEFAULT_MAX_RESPONSE_BYTES, [1024, 1024 * 1024 * 1024], 'A larger response body is treated as a failed (retryable) request; see "Large records" in docs/configuration.md before raising it');
export const SCHEDULE: Setting<string> = {
  name: 'THREAT_MIRROR_SCHEDULE',
  default: '*/10 * * * *',
  meaning: 'Cron expression (UTC) of the daemon',
  read(env) {
    const schedule = value(env, this.name) ?? this.default;
    if (!isCronExpression(schedule)) throw new ConfigError(`${this.name}: "${schedule}" is not a valid cron expression`);
    return schedule;
  },
};
export const JITTER_SECONDS = wholeNumber('THREAT_MIRROR_JITTER_SECONDS', 0, [0, 86_400], 'Random delay before each scheduled run, so a fleet does not hit the service at once');
export const HTTP_PORT = optionalNumber('THREAT_MIRROR_HTTP_PORT', '(off)', [0, 65_535], 'Serve the HTTP endpoints (below) on this port', true);
export const HTTP_HOST = text('THREAT_MIRROR_HTTP_HOST', '127.0.0.1', 'Address the HTTP endpoints bind to');
export const HTTP_TOKEN: Variable = {
  name: 'THREAT_MIRROR_HTTP_TOKEN',
  default: '(none)',
  meaning: '/v1/* then requires "Authorization: Bearer TOKEN" (16+ characters; or THREAT_MIRROR_HTTP_TOKEN_FILE: a file holding it); probes and /metrics stay open',
};
export const FRESH_MAX_RPS = decimal('THREAT_MIRROR_FRESH_MAX_RPS', 2, [0.1, 1_000], 'Requests per second per API key that fresh lookups (GET/POST /v1/lookup?fresh=1) may send; beyond, the mirror answers alone');
export const REPORTS = onOff('THREAT_MIRROR_REPORTS', false, 'Set to 1 to also mirror GET /organization/reports and their proposals');
export const REPORTS_RECENT_DAYS = wholeNumber('THREAT_MIRROR_REPORTS_RECENT_DAYS', 30, [1, 3_650], 'Days of reports every incremental run re-reads (their statuses change after filing)');
export const RECONCILE_DAYS = wholeNumber('THREAT_MIRROR_RECONCILE_DAYS', 7, [0, 3_650], 'Every mirrored day is re-walked (removals, changes) at least once in this many days; 0: every run');
export const RECONCILE_MAX_REQUESTS = wholeNumber('THREAT_MIRROR_RECONCILE_MAX_REQUESTS', 20, [0, 1_000_000], 'Requests a run may spend per organization re-walking due days, after its incremental range; 0 turns it off');
export const EXPORTS: Variable = {
  name: 'THREAT_MIRROR_EXPORTS',
  default: '(none)',
  meaning: `Export files the daemon rewrites (atomically) after each run that changed them, format=path pairs, e.g. rpz=/data/threats.rpz,hosts=/data/hosts.txt; formats: ${EXPORT_FORMATS.join(', ')}`,
};
export const CHECKPOINTS = choice('THREAT_MIRROR_CHECKPOINTS', CHECKPOINT_MODES, 'auto', 'auto: the writer folds the WAL into the file; external: leave it to a replicator such as Litestream (docs/readers-and-replicas.md)');
export const WAL_STARVED_SECONDS = wholeNumber('THREAT_MIRROR_WAL_STARVED_SECONDS', 1800, [1, 31_536_000], '/readyz reports a reason once readers have kept WAL checkpoints from completing this long');
export const RESTORE_FROM: Variable = {
  name: 'THREAT_MIRROR_RESTORE_FROM',
  default: '(off)',
  meaning:
    'A Litestream replica (s3://bucket/path, s3://bucket.localhost:port/path, file:///path or /path): a writer that finds no THREAT_MIRROR_DB restores it from there first, checks it, and goes on from its checkpoints; no replica yet: starts empty (docs/readers-and-replicas.md)',
};
export const RESTORE_CONFIG: Variable = {
  name: 'THREAT_MIRROR_RESTORE_CONFIG',
  default: '(off)',
  meaning: "Instead of THREAT_MIRROR_RESTORE_FROM: a Litestream configuration file whose entry for THREAT_MIRROR_DB names the replica (an S3 endpoint such as MinIO's, a region, ...)",
};
export const LITESTREAM: Variable = { name: 'THREAT_MIRROR_LITESTREAM', default: '(the bundled one, or litestream on the PATH)', meaning: 'The Litestream 0.3 binary THREAT_MIRROR_RESTORE_FROM runs' };
export const SNAPSHOT: Variable = { name: 'THREAT_MIRROR_SNAPSHOT', default: '(off)', meaning: 'Daemon: publish a compacted copy here (and FILE.json) after every run that changed something' };
export const DNS_PORT = optionalNumber('THREAT_MIRROR_DNS_PORT', '(off)', [0, 65_535], 'Serve the response policy zone as a DNS primary on this port, UDP and TCP (SOA, AXFR, IXFR): resolvers become its secondaries (docs/dns.md)', true);
export const DNS_HOST = text('THREAT_MIRROR_DNS_HOST', '127.0.0.1', 'Address the DNS primary binds to, and sends NOTIFY from');
export const RPZ_ZONE = text('THREAT_MIRROR_RPZ_ZONE', 'rpz.threat-mirror', 'Name of the zone the DNS primary serves (up to 63 characters)');
/** Loopback only by default: a resolver on another machine is let in by naming its network. */
export const DNS_ALLOW: Variable = { name: 'THREAT_MIRROR_DNS_ALLOW', default: '127.0.0.0/8,::1/128', meaning: 'CIDRs that may query and transfer the zone; others are REFUSED' };
export const DNS_NOTIFY: Variable = {
  name: 'THREAT_MIRROR_DNS_NOTIFY',
  default: '(none)',
  meaning: 'host:port of secondaries sent NOTIFY after each run that changed the zone, e.g. 10.0.0.53:53,[fd00::53]:53',
};
export const DNS_TSIG_KEY: Variable = {
  name: 'THREAT_MIRROR_DNS_TSIG_KEY',
  default: '(none)',
  meaning: 'NAME:BASE64 (or hmac-sha256:NAME:BASE64; or THREAT_MIRROR_DNS_TSIG_KEY_FILE): every DNS query must be signed with this HMAC-SHA256 key, every answer and NOTIFY is (docs/dns.md)',
};
export const ALLOWLIST: Variable = {
  name: 'THREAT_MIRROR_ALLOWLIST',
  default: '(none)',
  meaning:
    `A file of local exceptions, one a line (URL, host, address, e-mail or exact content; "# reason" after it): lookup, exports and the zone treat what it allows as not blocked; the daemon looks at it every ${POLL_MS / 1000} s and uses a change within a second or two (docs/lookup.md)`,
};
export const PROGRESS_SECONDS = decimal('THREAT_MIRROR_PROGRESS_SECONDS', 30, [0.1, 86_400], 'Seconds between "progress" log records of a run when stderr is no terminal (or NO_COLOR / TERM=dumb)');
export const NOW: Variable = { name: 'THREAT_MIRROR_NOW', default: '(system clock)', meaning: 'Fix the clock (ISO timestamp), for tests and replays' };
export const LOG_LEVEL = choice('LOG_LEVEL', LOG_LEVELS, 'info', 'fatal, error, warn, info, debug, trace or silent');

/**
 * Names read besides the table's, each a form of one of its variables: a secret read from a file
 * (config/read.ts readSecret), one organization's key (config/service.ts) and its scope
 * (config/asset-types.ts); NAME is the organization's name upper-cased, `_` for anything else.
 * `--help` lists them; test/exposed-names.test.ts checks every name a doc gives against both lists.
 */
export const VARIABLE_FORMS: ReadonlyArray<{ readonly form: string; readonly pattern: RegExp }> = [
  { form: 'THREAT_MIRROR_API_KEY_FILE, THREAT_MIRROR_HTTP_TOKEN_FILE, THREAT_MIRROR_DNS_TSIG_KEY_FILE', pattern: /^THREAT_MIRROR_(API_KEY|HTTP_TOKEN|DNS_TSIG_KEY)_FILE$/ },
  { form: 'THREAT_MIRROR_API_KEY_<NAME> (or _<NAME>_FILE)', pattern: /^THREAT_MIRROR_API_KEY_[A-Z0-9_]+$/ },
  { form: 'THREAT_MIRROR_ASSET_TYPES_<NAME>', pattern: /^THREAT_MIRROR_ASSET_TYPES_[A-Z0-9_]+$/ },
];

/** In the order `--help` lists them. */
export const ENVIRONMENT_VARIABLES: readonly Variable[] = [
  API_URL,
  ALLOW_INSECURE_HTTP,
  DB,
  API_KEY,
  ORG,
  ORGS,
  ASSET_TYPES,
  INITIAL_DAYS,
  HISTORY_FROM,
  HISTORY_MAX_REQUESTS,
  LOOKBACK_DAYS,
  CONCURRENCY,
  MAX_RPS,
  REQUEST_TIMEOUT_MS,
  MAX_RETRIES,
  RETRY_MIN_MS,
  RETRY_MAX_MS,
  RETRY_AFTER_MAX_MS,
  MAX_RESPONSE_BYTES,
  SCHEDULE,
  JITTER_SECONDS,
  HTTP_PORT,
  HTTP_HOST,
  HTTP_TOKEN,
  FRESH_MAX_RPS,
  REPORTS,
  REPORTS_RECENT_DAYS,
  RECONCILE_DAYS,
  RECONCILE_MAX_REQUESTS,
  EXPORTS,
  CHECKPOINTS,
  WAL_STARVED_SECONDS,
  RESTORE_FROM,
  RESTORE_CONFIG,
  LITESTREAM,
  SNAPSHOT,
  DNS_PORT,
  DNS_HOST,
  RPZ_ZONE,
  DNS_ALLOW,
  DNS_NOTIFY,
  DNS_TSIG_KEY,
  ALLOWLIST,
  PROGRESS_SECONDS,
  NOW,
  LOG_LEVEL,
];
