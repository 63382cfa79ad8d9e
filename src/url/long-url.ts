// A looked-up value too long to canonicalize whole (a URL of megabytes) is still matched: the work
// is capped on its host and the start of its path, not refused. Every expression a stored threat
// can have is at most a few thousand characters (lookup-fields.ts derives none for longer
// contents), so what lies past the cap can only decide an exact match, which the value's own
// text still gets.
import { SPECIAL_SCHEMES, schemeAndAuthorityStart } from './canonical-url.js';

/** Characters of a URL canonicalized whole; past this, the host and the leading directories only. */
export const MAX_CANONICALIZED_URL = 4096;
/** A host is at most 253 characters; an authority with credentials and a port, a little more. */
const MAX_AUTHORITY = 2048;
/** A segment that may be a dot segment once unescaped: "/.", "/..", "/%2e", "\\." … */
const DOT_SEGMENT = /[/\\](?:\.|%2e)/i;

/**
 * The value itself when it is short; otherwise its scheme and authority followed by the whole
 * directories of its first MAX_CANONICALIZED_URL path characters, no query and no fragment: a URL
 * every covering expression of which covers the value too (each is the value's host with one of
 * its real leading directories). When the part cut off holds a dot segment, which could climb
 * above the directories kept, only the host is kept. Null when the authority alone is too long
 * to be a host.
 */
export function boundedLookupUrl(value: string): string | null {
  if (value.length <= MAX_CANONICALIZED_URL) return value;
  const text = value.replace(/[\t\r\n]/g, '');
  const start = schemeAndAuthorityStart(text);
  if (start === null) return null;
  const special = SPECIAL_SCHEMES.has(start.scheme);
  let authorityEnd = start.authorityAt;
  while (authorityEnd < text.length && !isAuthorityEnd(text.charCodeAt(authorityEnd), special)) authorityEnd += 1;
  if (authorityEnd - start.authorityAt > MAX_AUTHORITY) return null;
  let pathEnd = authorityEnd;
  while (pathEnd < text.length && text[pathEnd] !== '?' && text[pathEnd] !== '#') pathEnd += 1;
  if (pathEnd - authorityEnd <= MAX_CANONICALIZED_URL) return text.slice(0, pathEnd);
  const kept = text.slice(authorityEnd, authorityEnd + MAX_CANONICALIZED_URL);
  const lastSlash = Math.max(kept.lastIndexOf('/'), special ? kept.lastIndexOf('\\') : -1);
  const directories = lastSlash < 0 ? '/' : kept.slice(0, lastSlash + 1);
  const cutOff = text.slice(authorityEnd + directories.length, pathEnd);
  return `${text.slice(0, authorityEnd)}${DOT_SEGMENT.test(cutOff) ? '/' : directories}`;
}

function isAuthorityEnd(code: number, special: boolean): boolean {
  return code === 0x2f || code === 0x3f || code === 0x23 || (special && code === 0x5c);
}
