// THREAT_MIRROR_HTTP_TOKEN (or _FILE): the bearer token /v1/* requires. Read with the config; the
// HTTP thread checks it (lib/bearer-token.ts). The probes and /metrics stay open, as an orchestrator
// and Prometheus expect them to be.
import { ConfigError } from '../lib/errors.js';
import type { Secret } from '../lib/secret.js';
import { type Environment, type FileReader, readSecret } from './read.js';
import { HTTP_TOKEN } from './variables.js';

/** A guessable token protects nothing: 16 characters is 96 bits in base64, 64 in hex. */
const MIN_TOKEN_LENGTH = 16;
/** RFC 6750's b64token: what a client can send after `Bearer ` without quoting. */
const TOKEN_CHARACTERS = /^[A-Za-z0-9\-._~+/]+=*$/;

/** The token, or undefined when neither variable is set. A Secret: registered with the redaction point the moment it is read. */
export function loadHttpToken(env: Environment, readFile: FileReader): Secret | undefined {
  const token = readSecret(env, HTTP_TOKEN.name, readFile);
  if (token === undefined) return undefined;
  // The messages never quote the token: it is a secret even when it is a bad one.
  if (token.secret.reveal().length < MIN_TOKEN_LENGTH) {
    throw new ConfigError(`${token.variable}: the token is shorter than ${MIN_TOKEN_LENGTH} characters; use a random one, e.g. \`openssl rand -hex 32\``);
  }
  if (!TOKEN_CHARACTERS.test(token.secret.reveal())) {
    throw new ConfigError(`${token.variable}: the token may hold only letters, digits and - . _ ~ + / (then = padding), so that clients can send it as "Authorization: Bearer TOKEN"`);
  }
  return token.secret;
}
