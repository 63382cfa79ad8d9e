// The bearer token of /v1/* as the HTTP thread checks it: in constant time, against its digest
// (the token is read with the config: config/http-token.ts).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Secret } from './secret.js';

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
