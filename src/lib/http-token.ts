// The optional bearer token of /v1/* (THREAT_MIRROR_HTTP_TOKEN or _FILE): read with the config,
// checked by the HTTP thread in constant time. The probes and /metrics stay open, as an
// orchestrator and Prometheus expect them to be.
import { createHash, timingSafeEqual } from 'node:crypto';
import { ConfigError, errorMessage } from './errors.js';
import { Secret } from './secret.js';

export const HTTP_TOKEN_VARIABLE = 'THREAT_MIRROR_HTTP_TOKEN';
const FILE_VARIABLE = `${HTTP_TOKEN_VARIABLE}_FILE`;
/** A guessable token protects nothing: 16 characters is 96 bits in base64, 64 in hex. */
const MIN_TOKEN_LENGTH = 16;
/** RFC 6750's b64token: what a client can send after `Bearer ` without quoting. */
const TOKEN_CHARACTERS = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * The token, or undefined when neither variable is set. Read the way the API key files are read
 * (config.ts readApiKey): the file's content, trimmed. A Secret: registered with the redaction
 * point the moment it is read.
 */
export function loadHttpToken(env: Readonly<Record<string, string | undefined>>, readFile: (path: string) => string): Secret | undefined {
  const direct = env[HTTP_TOKEN_VARIABLE]?.trim() || undefined;
  const file = env[FILE_VARIABLE]?.trim() || undefined;
  if (direct !== undefined && file !== undefined) throw new ConfigError(`${HTTP_TOKEN_VARIABLE}: set either ${HTTP_TOKEN_VARIABLE} or ${FILE_VARIABLE}, not both`);
  if (direct !== undefined) return checked(new Secret(direct), HTTP_TOKEN_VARIABLE);
  if (file === undefined) return undefined;
  let contents: string;
  try {
    contents = readFile(file);
  } catch (error) {
    throw new ConfigError(`${FILE_VARIABLE}: cannot read ${file}: ${errorMessage(error)}`);
  }
  const token = contents.trim();
  if (token === '') throw new ConfigError(`${FILE_VARIABLE}: ${file} is empty`);
  return checked(new Secret(token), FILE_VARIABLE);
}

function checked(token: Secret, variable: string): Secret {
  // The messages never quote the token: it is a secret even when it is a bad one.
  if (token.reveal().length < MIN_TOKEN_LENGTH) {
    throw new ConfigError(`${variable}: the token is shorter than ${MIN_TOKEN_LENGTH} characters; use a random one, e.g. \`openssl rand -hex 32\``);
  }
  if (!TOKEN_CHARACTERS.test(token.reveal())) {
    throw new ConfigError(`${variable}: the token may hold only letters, digits and - . _ ~ + / (then = padding), so that clients can send it as "Authorization: Bearer TOKEN"`);
  }
  return token;
}

/**
 * Whether an Authorization header carries the token. Both sides are hashed first, so the
 * comparison takes the same time whatever the header's length and however much of it matches.
 */
export function bearerMatches(header: string | undefined, expectedDigest: Buffer): boolean {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? '');
  const given = createHash('sha256').update(match?.[1] ?? '').digest();
  return timingSafeEqual(given, expectedDigest) && match !== null;
}

/** What the HTTP thread keeps of the token: its digest, never the token itself. */
export function tokenDigest(token: Secret): Buffer {
  return createHash('sha256').update(token.reveal()).digest();
}
