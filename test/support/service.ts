// The stand-in of the service as most tests start it: one organization key, a fixed "now", the
// threats given; closed after the test. And the environment the CLI needs to mirror it.
import type { Standin, StandinOptions, StandinThreat } from '../../src/standin/index.js';
import { startStandin } from '../../src/standin/index.js';
import { afterThisTest } from './cleanup.js';

/** A stand-in closed after the current test (after any CLI the test started has stopped). */
export async function startTestStandin(options: StandinOptions): Promise<Standin> {
  const standin = await startStandin(options);
  afterThisTest('servers', () => standin.close());
  return standin;
}

/** Keys where `key` is the organization key of `organization` and no user keys exist. */
export function organizationKey(key: string, organization = 'acme'): StandinOptions['keys'] {
  return { organizationKeys: { [key]: organization }, userKeys: {} };
}

/** A stand-in serving `threats` to one organization key ('acme'), its "today" taken from `now`. */
export function serveThreats(key: string, now: string, threats: readonly StandinThreat[], more: Partial<StandinOptions> = {}): Promise<Standin> {
  return startTestStandin({ threats, keys: organizationKey(key), now: () => new Date(now), ...more });
}

export type Env = Record<string, string>;
export type MirrorEnv = (service: Standin, dbPath: string, extra?: Env) => Env;
/** One organization's key (organization 'acme'), or several organizations by name with a key each. */
export type MirrorKeys = string | Readonly<Record<string, string>>;

/**
 * The environment of a mirror of `keys` with its clock at `now` (null: the machine's clock), into
 * `dbPath`: a test file's own `settings` apply to every run, a run's `extra` on top.
 * A key alone mirrors organization 'acme' (THREAT_MIRROR_ORG, THREAT_MIRROR_API_KEY); an object
 * mirrors each organization it names (THREAT_MIRROR_ORGS, THREAT_MIRROR_API_KEY_<NAME>).
 */
export function mirrorEnvFor(keys: MirrorKeys, now: string | null, settings: Env = {}): MirrorEnv {
  return (service, dbPath, extra = {}) => ({
    THREAT_MIRROR_API_URL: service.url,
    THREAT_MIRROR_DB: dbPath,
    ...organizationsEnv(keys),
    ...(now === null ? {} : { THREAT_MIRROR_NOW: now }),
    ...settings,
    ...extra,
  });
}

function organizationsEnv(keys: MirrorKeys): Env {
  if (typeof keys === 'string') return { THREAT_MIRROR_ORG: 'acme', THREAT_MIRROR_API_KEY: keys };
  const entries = Object.entries(keys);
  return {
    THREAT_MIRROR_ORGS: entries.map(([name]) => name).join(','),
    ...Object.fromEntries(entries.map(([name, key]) => [`THREAT_MIRROR_API_KEY_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`, key])),
  };
}

/** A daemon that runs every second, serves its probes on a port of its choosing, and gives up on a failing request quickly. */
export const EVERY_SECOND_DAEMON: Env = {
  THREAT_MIRROR_SCHEDULE: '* * * * * *',
  THREAT_MIRROR_HTTP_PORT: '0',
  THREAT_MIRROR_RETRY_MIN_MS: '5',
  THREAT_MIRROR_RETRY_MAX_MS: '20',
  THREAT_MIRROR_MAX_RETRIES: '1',
};
