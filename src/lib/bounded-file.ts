// Reads a small text file named by a variable (a key in THREAT_MIRROR_API_KEY_FILE), refusing what
// is not one: a FIFO would hang start-up with no message, /dev/zero would grow memory without end.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** Far above any key, far below what could hurt: a key file is a few hundred bytes at most. */
export const MAX_SECRET_FILE_BYTES = 64 * 1024;

/**
 * The file's text, read only when it is a regular file of at most `maxBytes` bytes; otherwise an
 * Error saying which rule it broke. Opened non-blocking, so opening a FIFO with no writer returns
 * at once (and is refused by its type) instead of waiting for one.
 */
export function readBoundedTextFile(path: string, maxBytes = MAX_SECRET_FILE_BYTES): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new Error(`not a regular file (${kindOf(stats)}); give a file that holds the key`);
    if (stats.size > maxBytes) throw new Error(`${stats.size} bytes, more than the ${maxBytes} a key file may have`);
    // Read one byte past the limit: a file that grew since fstat is refused too, never read whole.
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
      if (length > maxBytes) throw new Error(`more than the ${maxBytes} bytes a key file may have`);
    }
    return buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

function kindOf(stats: import('node:fs').Stats): string {
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isSocket()) return 'a socket';
  return 'not a file';
}
