// Replaces a file so that a reader (a resolver reloading its zone, an IDS, a wallet's updater)
// only ever sees the old file or the new one whole: the new content goes to a temporary file in
// the same folder (same filesystem, so the rename is atomic), is flushed to disk, then renamed
// over the target; the folder is flushed too so the rename survives a power cut.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { mkdir, open, readdir, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ChunkWriter } from './chunk-writer.js';

/** An export's content: strings, or (rendered on two threads, parallel-render.ts) strings and bytes as they come. */
export type Chunks = Iterable<string> | AsyncIterable<string | Uint8Array>;

export interface TempFile {
  readonly path: string;
  /** sha256 of what was written, comment lines left out (see fileDigest); of nothing when not asked for. */
  readonly digest: string;
  readonly bytes: number;
}

/** `.NAME.PID.tmp` beside the target: hidden from `*.rpz`-style globs, and its writer's pid is known. */
function tempPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.${process.pid}.tmp`);
}

/**
 * Writes the chunks to a fresh temporary file beside `target` and flushes it to disk. With a
 * comment prefix, chunks that start with it (comment lines come as chunks of their own) are left
 * out of the digest; with null, nothing is hashed (no file to compare with: hashing 400 MB of
 * JSONL took ~1.5 s) and the digest is that of nothing.
 */
export async function writeTempFile(target: string, chunks: Chunks, commentPrefix?: string | null): Promise<TempFile> {
  await mkdir(dirname(target), { recursive: true });
  await removeStaleTempFiles(target);
  const path = tempPathFor(target);
  // Created exclusively (O_EXCL|O_CREAT never follows a link): a link planted at this name would
  // otherwise have the export written wherever it points. One left by an earlier process with this
  // pid, or a planted one, is removed first (the link itself, not what it points to).
  await unlink(path).catch(() => undefined);
  const handle = await open(path, 'wx', 0o644);
  const out = new ChunkWriter(handle, commentPrefix);
  try {
    if (Symbol.asyncIterator in chunks) {
      for await (const chunk of chunks) await (typeof chunk === 'string' ? out.add(chunk) : out.addBytes(chunk));
    } else {
      // Synchronous chunks are a row each: no promise per row where none is needed.
      for (const chunk of chunks) if (!out.tryAdd(chunk)) await out.add(chunk);
    }
    await out.finish();
    await handle.sync();
  } catch (error) {
    await out.finish().catch(() => undefined);
    await handle.close();
    await unlink(path).catch(() => undefined);
    throw error;
  }
  await handle.close();
  return { path, digest: out.digest(), bytes: out.bytes };
}

/** Renames the temporary file over the target, then flushes the folder's entry. */
export async function commitTempFile(temp: TempFile, target: string): Promise<void> {
  await rename(temp.path, target);
  const folder = await open(dirname(target), 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

export async function discardTempFile(temp: TempFile): Promise<void> {
  await unlink(temp.path).catch(() => undefined);
}

/**
 * sha256 of a file, or undefined when there is none. With a comment prefix, lines that start with
 * it are left out: a header whose counts moved while the entries did not is no change worth a
 * rewrite (and a resolver's reload).
 */
export async function fileDigest(path: string, commentPrefix?: string): Promise<string | undefined> {
  const digest = createHash('sha256');
  try {
    if (commentPrefix === undefined) {
      for await (const chunk of createReadStream(path)) digest.update(chunk as Buffer);
    } else {
      for await (const line of createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity })) {
        if (!line.startsWith(commentPrefix)) digest.update(`${line}\n`, 'utf8');
      }
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return digest.digest('hex');
}

/** A writer killed mid-way (kill -9, power cut) leaves its temporary file: remove those whose process is gone. */
async function removeStaleTempFiles(target: string): Promise<void> {
  const prefix = `.${basename(target)}.`;
  let names: string[];
  try {
    names = await readdir(dirname(target));
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    const pid = Number(name.slice(prefix.length, -'.tmp'.length));
    if (!Number.isInteger(pid) || pid <= 0 || isAlive(pid)) continue;
    await unlink(join(dirname(target), name)).catch(() => undefined);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
