// The one reader of URLs. Every consumer (the stored lookup and export columns, lookup, the
// allowlist, fresh lookups) gets a URL's meaning here, the browser's: the browser's input rules,
// then the WHATWG URL parser Node ships (`new URL`, ada, which passes the web-platform-tests), and
// everything derived from that one parse. No second parser: the Safe Browsing expressions
// (expressions.ts) are built from what this returns.
//
// Why it matters: a reader that disagrees with the browser turns a path into a host
// (`https://sites.google.com/view/x/%2e%2e%2f` is a path to the browser) or misses the host a
// browser opens (`http:evil.example/x`, `ht\ttps://evil.example/`, `\x01https://…`).
import { startsWithHostName } from './value-kinds.js';

export interface WebUrl {
  /**
   * `new URL().hostname`: lower-case ASCII (internationalized names in xn-- form), an IPv4 address
   * as a dotted quad, an IPv6 one bracketed in its canonical form; one trailing dot dropped.
   */
  readonly host: string;
  /**
   * `new URL().pathname` (dot segments resolved by the browser, `\` read as `/`), each segment's
   * percent-escapes made canonical: unescaped, then bytes <= 0x20 and >= 0x7F, `#`, `%`, `/` and `?`
   * escaped again (upper-case hex), a segment that became `.` or `..` escaped whole. An escaped
   * `/` stays inside its segment: it never makes a path shorter. Starts with `/`.
   */
  readonly path: string;
  /** The query without its `?`, escapes canonical as in the path (but `/` and `?` kept); null when the URL has no `?`. */
  readonly query: string | null;
}

/** A DNS name is at most 253 characters: a longer host is no name a browser can reach. */
export const MAX_HOST_CHARS = 253;
/** Leading and trailing C0 controls and spaces, which the URL standard strips first. */
const C0_OR_SPACE_AT_ENDS = /^[\u0000-\u0020]+|[\u0000-\u0020]+$/g;
/** Any C0 control or space: a value without one needs none of the input rules (most do not). */
const CONTROL_OR_SPACE = /[\u0000-\u0020]/;
/** Tab, LF and CR, which it then removes anywhere. */
const TAB_OR_NEWLINE = /[\t\n\r]/g;
/** A scheme that the browser opens as a web page; `http:evil.example` needs no slashes. */
const WEB_SCHEME = /^https?:/i;
/** Percent-unescaping within a segment stops here: each round shortens it, this bounds hostile input. */
const MAX_UNESCAPE_ROUNDS = 8;

/** What the URL standard does to input before parsing it: the C0 controls and spaces at both ends stripped, tab/CR/LF removed. */
export function browserInput(value: string): string {
  return value.replace(C0_OR_SPACE_AT_ENDS, '').replace(TAB_OR_NEWLINE, '');
}

/**
 * The URL a browser opens for `value`, or null when it opens no http(s) page: an http or https URL
 * (with or without slashes after the scheme), or a value that starts with a host name and has no
 * scheme (`evil.example/x`, read as `http://evil.example/x`, as Safe Browsing reads it).
 */
export function readWebUrl(value: string): WebUrl | null {
  const text = CONTROL_OR_SPACE.test(value) ? browserInput(value) : value;
  // Text with another scheme (`mailto:`, `javascript:`, `ftp://`) is no host name either.
  const input = WEB_SCHEME.test(text) ? text : startsWithHostName(text) ? `http://${text}` : null;
  if (input === null) return null;
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  const host = url.hostname.endsWith('.') ? url.hostname.slice(0, -1) : url.hostname;
  if (host === '' || host.length > MAX_HOST_CHARS) return null;
  return { host, path: canonicalPath(url.pathname), query: queryOf(url) };
}

/** Whether blocking this URL blocks its whole host (and every subdomain): the browser's path is `/`, with no query. */
export function isHostLevel(url: WebUrl): boolean {
  return url.path === '/' && url.query === null;
}

/** The query, or null when the URL has no `?` (`search` is '' both for none and for a bare `?`). */
function queryOf(url: URL): string | null {
  if (url.search !== '') return canonicalEscapes(url.search.slice(1), QUERY_KEEPS);
  const { href } = url;
  const hash = href.indexOf('#');
  return (hash < 0 ? href : href.slice(0, hash)).endsWith('?') ? '' : null;
}

function canonicalPath(pathname: string): string {
  if (!pathname.includes('%')) return pathname;
  return pathname
    .split('/')
    .map((segment) => {
      if (!segment.includes('%')) return segment;
      const canonical = canonicalEscapes(segment, PATH_KEEPS);
      return canonical === '.' ? '%2E' : canonical === '..' ? '%2E%2E' : canonical;
    })
    .join('/');
}

/** Whether an unescaped byte is written as itself: printable ASCII but `#` and `%`, and in a path segment `/` and `?` too. */
const PATH_KEEPS = (byte: number): boolean => byte > 0x20 && byte < 0x7f && byte !== 0x23 && byte !== 0x25 && byte !== 0x2f && byte !== 0x3f;
const QUERY_KEEPS = (byte: number): boolean => byte > 0x20 && byte < 0x7f && byte !== 0x23 && byte !== 0x25;
const HEX = '0123456789ABCDEF';

/** Unescaped to a fixed point (`%2561` → `%61` → `a`), then escaped again where `keeps` says so. */
function canonicalEscapes(text: string, keeps: (byte: number) => boolean): string {
  if (!text.includes('%')) return text;
  let bytes: Buffer = Buffer.from(text, 'utf8');
  for (let round = 0; round < MAX_UNESCAPE_ROUNDS && bytes.includes(0x25); round++) {
    const next = unescapeOnce(bytes);
    if (next.length === bytes.length) break;
    bytes = next;
  }
  let out = '';
  for (const byte of bytes) out += keeps(byte) ? String.fromCharCode(byte) : `%${HEX[byte >> 4]}${HEX[byte & 15]}`;
  return out;
}

function unescapeOnce(bytes: Buffer): Buffer {
  const out = Buffer.alloc(bytes.length);
  let length = 0;
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index] as number;
    if (byte === 0x25 && index + 2 < bytes.length) {
      const high = hexValue(bytes[index + 1] as number);
      const low = hexValue(bytes[index + 2] as number);
      if (high >= 0 && low >= 0) {
        out[length++] = high * 16 + low;
        index += 2;
        continue;
      }
    }
    out[length++] = byte;
  }
  return out.subarray(0, length);
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  return -1;
}
