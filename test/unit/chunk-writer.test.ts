// writeTempFile through ChunkWriter: whatever the mix of chunks (rows, comment lines, strings longer
// than a write buffer, bytes), the file holds them in order and its digest leaves out exactly the
// comment lines, as fileDigest reads them back from the file.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { discardTempFile, fileDigest, writeTempFile } from '../../src/export/atomic-file.js';
import { tempDir } from '../support/temp.js';

/** Rows of every length up to a few times a write buffer (128 KB), some multi-byte, with comment lines among them. */
function lines(): string[] {
  const out: string[] = [];
  for (let index = 0; index < 3_000; index += 1) {
    if (index % 97 === 0) out.push(`# comment ${index} ünïcode\n`);
    else if (index % 500 === 250) out.push(`long-${'é'.repeat(70_000 + index)}\n`);
    else out.push(`row-${index}-${'x'.repeat(index % 300)}-日本\n`);
  }
  return out;
}

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

describe('writeTempFile', () => {
  it('writes string chunks in order, and digests all but the comment lines', async () => {
    const target = join(tempDir(), 'list.txt');
    const chunks = lines();
    const temp = await writeTempFile(target, chunks, '#');
    const text = readFileSync(temp.path, 'utf8');
    expect(text).toBe(chunks.join(''));
    expect(temp.bytes).toBe(Buffer.byteLength(text));
    expect(temp.digest).toBe(sha256(chunks.filter((line) => !line.startsWith('#')).join('')));
    expect(temp.digest).toBe(await fileDigest(temp.path, '#'));
    await discardTempFile(temp);
  });

  it('writes strings and bytes as they come from an asynchronous source, digesting all of it', async () => {
    const target = join(tempDir(), 'records.jsonl');
    const chunks = lines().map((line) => line.replace(/^#/, '-'));
    async function* source(): AsyncGenerator<string | Uint8Array> {
      for (const [index, line] of chunks.entries()) {
        // Bytes from a reused buffer, as parallel-render.ts hands them over: overwritten right after.
        if (index % 3 === 0) {
          const reused = Buffer.from(line, 'utf8');
          yield reused;
          reused.fill(0);
        } else yield line;
      }
    }
    const temp = await writeTempFile(target, source());
    expect(readFileSync(temp.path, 'utf8')).toBe(chunks.join(''));
    expect(temp.digest).toBe(sha256(chunks.join('')));
    await discardTempFile(temp);
  });

  it('hashes nothing when told there is nothing to compare with (null)', async () => {
    const temp = await writeTempFile(join(tempDir(), 'x.txt'), ['a\n', 'b\n'], null);
    expect(temp.digest).toBe(createHash('sha256').digest('hex'));
    expect(readFileSync(temp.path, 'utf8')).toBe('a\nb\n');
    await discardTempFile(temp);
  });
});
