// Which service to ask and as whom: THREAT_MIRROR_API_URL (refused where it would leak the key),
// the organizations and their API keys, and the secrets the redaction point must know first.
import { ConfigError } from '../lib/errors.js';
import { redact, registerSecret } from '../lib/redact.js';
import type { Secret } from '../lib/secret.js';
import { assertNoStrayScopes, type AssetTypeScope, loadAssetTypeScope, organizationSuffix } from './asset-types.js';
import { type Environment, type FileReader, flag, InvalidValue, parseVariable, readSecret, value } from './read.js';
import { ALLOW_INSECURE_HTTP, API_KEY, API_URL, DNS_TSIG_KEY, HTTP_TOKEN, ORG, ORGS } from './variables.js';

export interface OrganizationConfig extends AssetTypeScope {
  /** The label rows are stored under; also picks the key variable. */
  readonly name: string;
  readonly apiKey: Secret;
  /** Which variable the key came from, for messages (never the key itself). */
  readonly apiKeyVariable: string;
}

const ORGANIZATION_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The key variable of an organization: the name upper-cased, anything not alphanumeric as `_`. */
export function apiKeyVariableFor(organization: string): string {
  return `${API_KEY.name}_${organizationSuffix(organization)}`;
}

/**
 * Tells the redaction point every secret the environment holds, before anything can fail: the
 * keys and the HTTP token given directly and any credentials in THREAT_MIRROR_API_URL. Those read
 * from files register themselves when loadConfig reads them (Secret).
 */
export function registerSecretsOf(env: Environment): void {
  for (const [name, raw] of Object.entries(env)) {
    const secret = name === HTTP_TOKEN.name || name === DNS_TSIG_KEY.name || (/^THREAT_MIRROR_API_KEY(_[A-Z0-9_]*)?$/.test(name) && !name.endsWith('_FILE'));
    if (raw === undefined || !secret) continue;
    registerSecret(raw);
    registerSecret(raw.trim());
    // A TSIG key's secret is what follows its name.
    if (name === DNS_TSIG_KEY.name) registerSecret(raw.trim().split(':').at(-1) ?? '');
  }
  const credentials = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)@/i.exec(env[API_URL.name]?.trim() ?? '')?.[1];
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

/**
 * The base URL without a trailing slash, refused when it would leak: credentials in it (they would
 * be printed in messages and are not how the service authenticates), or plain HTTP to a host that
 * is not loopback (the key travels in a header) unless THREAT_MIRROR_ALLOW_INSECURE_HTTP=1, which
 * `insecure` then reports for a warning at start.
 */
export function loadApiUrl(env: Environment): { apiUrl: string; insecure: boolean } {
  const raw = value(env, API_URL.name);
  if (raw !== undefined && /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(raw)) {
    throw new ConfigError(
      `${API_URL.name}: must not contain credentials (user:password@), found in ${redact(raw)}; the service authenticates with the API key (THREAT_MIRROR_API_KEY…), so remove them from the URL`,
    );
  }
  const apiUrl = parseVariable(env, API_URL.name, undefined, httpUrl);
  const url = new URL(apiUrl);
  const insecure = url.protocol === 'http:' && !isLoopback(url.hostname);
  if (insecure && !flag(env, ALLOW_INSECURE_HTTP.name, false)) {
    throw new ConfigError(
      `${API_URL.name}: plain http:// to ${url.hostname}, which is not a loopback address, would send the API key unencrypted; use https://, or set ${ALLOW_INSECURE_HTTP.name}=1 to accept that`,
    );
  }
  return { apiUrl: apiUrl.replace(/\/+$/, ''), insecure };
}

function httpUrl(raw: string): string {
  let protocol: string;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    protocol = '';
  }
  if (protocol !== 'http:' && protocol !== 'https:') throw new InvalidValue('must be an http:// or https:// URL');
  return raw;
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

/** THREAT_MIRROR_ORG and THREAT_MIRROR_API_KEY, or THREAT_MIRROR_ORGS and a key variable for each. */
export function loadOrganizations(env: Environment, readFile: FileReader): OrganizationConfig[] {
  const organizations = loadOrganizationKeys(env, readFile).map((organization) => ({ ...organization, ...loadAssetTypeScope(env, organization.name) }));
  assertNoStrayScopes(
    env,
    organizations.map((organization) => organization.name),
  );
  return organizations;
}

/**
 * For the read commands (lookup, status): the organizations the environment names, without their
 * keys; undefined when it names none (THREAT_MIRROR_ORG and THREAT_MIRROR_ORGS unset): the file's then.
 */
export function loadOrganizationNames(env: Environment): string[] | undefined {
  const list = value(env, ORGS.name);
  if (list === undefined) {
    const name = value(env, ORG.name);
    if (name === undefined) return undefined;
    assertOrganizationName(name, ORG.name);
    return [name];
  }
  const names = list.split(',').map((name) => name.trim()).filter((name) => name !== '');
  if (names.length === 0) throw new ConfigError(`${ORGS.name}: lists no organization`);
  for (const name of names) assertOrganizationName(name, ORGS.name);
  return [...new Set(names)];
}

function loadOrganizationKeys(env: Environment, readFile: FileReader): Array<Omit<OrganizationConfig, keyof AssetTypeScope>> {
  const list = value(env, ORGS.name);
  if (list === undefined) {
    const name = ORG.read(env);
    assertOrganizationName(name, ORG.name);
    return [{ name, ...readApiKey(env, API_KEY.name, readFile) }];
  }
  for (const conflicting of [API_KEY.name, `${API_KEY.name}_FILE`, ORG.name]) {
    if (value(env, conflicting) !== undefined) {
      throw new ConfigError(`${conflicting}: not used when ${ORGS.name} is set; give each organization its own THREAT_MIRROR_API_KEY_<NAME>`);
    }
  }
  const names = list.split(',').map((name) => name.trim()).filter((name) => name !== '');
  if (names.length === 0) throw new ConfigError(`${ORGS.name}: lists no organization`);
  const byVariable = new Map<string, string>();
  return names.map((name) => {
    assertOrganizationName(name, ORGS.name);
    const variable = apiKeyVariableFor(name);
    const clash = byVariable.get(variable);
    if (clash !== undefined) throw new ConfigError(`${ORGS.name}: "${clash}" and "${name}" both read their key from ${variable}; rename one`);
    byVariable.set(variable, name);
    return { name, ...readApiKey(env, variable, readFile) };
  });
}

function readApiKey(env: Environment, variable: string, readFile: FileReader): { apiKey: Secret; apiKeyVariable: string } {
  const key = readSecret(env, variable, readFile);
  if (key === undefined) throw new ConfigError(`${variable}: missing; set it to the organization's API key, or ${variable}_FILE to a file holding it`);
  return { apiKey: key.secret, apiKeyVariable: key.variable };
}

function assertOrganizationName(name: string, variable: string): void {
  if (!ORGANIZATION_NAME.test(name)) {
    throw new ConfigError(`${variable}: "${name}" is not a valid organization name (letters, digits, '.', '_' or '-', up to 64 characters)`);
  }
}
