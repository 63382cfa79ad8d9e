// THREAT_MIRROR_DNS_TSIG_KEY (or _FILE): the key every query to the DNS primary must be signed
// with, and every answer and NOTIFY is (src/dns/tsig.ts). Written as `dig -y` and BIND's
// `tsig-keygen` give it: NAME:BASE64, or hmac-sha256:NAME:BASE64.
import { ConfigError } from '../lib/errors.js';
import { Secret } from '../lib/secret.js';
import { type Environment, type FileReader, readSecret } from './read.js';
import { DNS_TSIG_KEY } from './variables.js';

export interface DnsTsigKey {
  /** Lower case, no trailing dot. */
  readonly name: string;
  /** The key's bytes, base64. */
  readonly secret: Secret;
}

/** Shorter keys are guessable; RFC 8945 asks for at least the MAC's length (32 bytes for SHA-256), BIND's tsig-keygen gives 32. */
const MIN_KEY_BYTES = 16;
const KEY_NAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The key, or undefined when neither variable is set. The messages never quote the secret. */
export function loadDnsTsigKey(env: Environment, readFile: FileReader): DnsTsigKey | undefined {
  const given = readSecret(env, DNS_TSIG_KEY.name, readFile);
  if (given === undefined) return undefined;
  const parts = given.secret.reveal().split(':');
  if (parts.length === 3 && parts[0]?.toLowerCase() !== 'hmac-sha256') {
    throw new ConfigError(`${given.variable}: only hmac-sha256 is supported (the default of BIND's tsig-keygen and of PowerDNS); got "${parts[0]}"`);
  }
  const [name = '', secret = ''] = parts.length === 3 ? parts.slice(1) : parts;
  const keyName = name.toLowerCase().replace(/\.$/, '');
  if (parts.length < 2 || parts.length > 3 || !KEY_NAME.test(keyName)) {
    throw new ConfigError(`${given.variable}: expected NAME:BASE64 (or hmac-sha256:NAME:BASE64) with NAME a DNS name, as \`tsig-keygen -a hmac-sha256 NAME\` prints it`);
  }
  if (!BASE64.test(secret) || Buffer.from(secret, 'base64').length < MIN_KEY_BYTES) {
    throw new ConfigError(`${given.variable}: the secret after "${keyName}:" must be base64 of at least ${MIN_KEY_BYTES} bytes, e.g. \`openssl rand -base64 32\``);
  }
  return { name: keyName, secret: new Secret(secret) };
}
