// Reads THREAT_MIRROR_ALLOWLIST: the file's bytes, whole, into one version of the list (an
// Allowlist), or an AllowlistError saying what is wrong with it. A file that cannot be read is an
// error, never an empty list: only a file read whole that holds no entry allows nothing.
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { errorMessage } from '../lib/errors.js';
import { type Allowlist, AllowlistError, parseAllowlist } from './allowlist-entries.js';

/** Far above any list people keep by hand (100,000 entries of 40 characters), far below what could hurt. */
export const MAX_ALLOWLIST_BYTES = 8 * 1024 * 1024;

/** Which file was read: a change of any of these is a new file or new contents to read. */
export interface FileIdentity {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly size: bigint;
  readonly mtimeNs: bigint;
  readonly ctimeNs: bigint;
}

export interface ReadAllowlist {
  readonly list: Allowlist;
  /** The file as it was when read (fstat of the descriptor read from). */
  readonly identity: FileIdentity;
}

export function identityOf(stats: { dev: bigint; ino: bigint; size: bigint; mtimeNs: bigint; ctimeNs: bigint }): FileIdentity {
  return { dev: stats.dev, ino: stats.ino, size: stats.size, mtimeNs: stats.mtimeNs, ctimeNs: stats.ctimeNs };
}

export function sameIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/** Reads and parses the file; throws an AllowlistError (file, and line when one is to blame). */
export function readAllowlist(file: string): ReadAllowlist {
  const { bytes, identity } = readWhole(file);
  const lines = splitUtf8Lines(file, bytes);
  const version = createHash('sha256').update(bytes).digest('hex');
  return { list: { file, version, entries: parseAllowlist(file, lines) }, identity };
}

/**
 * The file's bytes and the identity of what was read. Opened non-blocking, so a FIFO with no
 * writer is refused at once rather than waited on; a file that grows past the limit while it is
 * read is refused too, never read whole.
 */
function readWhole(file: string): { bytes: Buffer; identity: FileIdentity } {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new AllowlistError(file, undefined, `cannot read it: ${errorMessage(error)}`);
  }
  try {
    const stats = fstatSync(fd, { bigint: true });
    if (!stats.isFile()) throw new AllowlistError(file, undefined, 'not a regular file; give a text file of one entry a line');
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.alloc(Math.min(MAX_ALLOWLIST_BYTES, Math.max(64 * 1024, Number(stats.size) + 1)));
      const read = readSync(fd, chunk, 0, chunk.length, null);
      if (read === 0) break;
      total += read;
      if (total > MAX_ALLOWLIST_BYTES) throw new AllowlistError(file, undefined, `more than the ${MAX_ALLOWLIST_BYTES} bytes an allowlist may have`);
      chunks.push(chunk.subarray(0, read));
    }
    // As it was before the bytes were read: a write during the read shows as a change at the next look.
    return { bytes: Buffer.concat(chunks), identity: identityOf(stats) };
  } catch (error) {
    if (error instanceof AllowlistError) throw error;
    throw new AllowlistError(file, undefined, `cannot read it: ${errorMessage(error)}`);
  } finally {
    closeSync(fd);
  }
}

/** The lines, each checked to be UTF-8 on its own so that the one that is not is named. */
function splitUtf8Lines(file: string, bytes: Buffer): string[] {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const lines: string[] = [];
  let start = 0;
  while (start <= bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    try {
      lines.push(decoder.decode(bytes.subarray(start, end)));
    } catch {
      throw new AllowlistError(file, lines.length + 1, 'is not UTF-8 text');
    }
    start = end + 1;
  }
  return lines;
}
