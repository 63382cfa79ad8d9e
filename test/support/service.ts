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

/**
 * The environment of a mirror of organization 'acme' with `key`, its clock at `now`, into `dbPath`:
 * a test file's own `settings` apply to every run, a run's `extra` on top.
 */
export function mirrorEnvFor(key: string, now: string, settings: Env = {}): MirrorEnv {
  return (service, dbPath, extra = {}) => ({
    THREAT_MIRROR_API_URL: service.url,
    THREAT_MIRROR_DB: dbPath,
    THREAT_MIRROR_ORG: 'acme',
    THREAT_MIRROR_API_KEY: key,
    THREAT_MIRROR_NOW: now,
    ...settings,
    ...extra,
  });
}

/** A daemon that runs every second, serves its probes on a port of its choosing, and gives up on a failing request quickly. */
export const EVERY_SECOND_DAEMON: Env = {
  THREAT_MIRROR_SCHEDULE: '* * * * * *',
  THREAT_MIRROR_HTTP_PORT: '0',
  THREAT_MIRROR_RETRY_MIN_MS: '5',
  THREAT_MIRROR_RETRY_MAX_MS: '20',
  THREAT_MIRROR_MAX_RETRIES: '1',
};
