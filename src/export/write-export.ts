// Where an export goes: a file replaced atomically and only when its content changed, or a stream.
import { once } from 'node:events';
import { open, stat } from 'node:fs/promises';
import { commitTempFile, discardTempFile, fileDigest, writeTempFile } from './atomic-file.js';
import type { BuiltExport } from './build-export.js';
import { rpzSerialOf } from './formats/rpz.js';

export interface FileWriteResult {
  /** false: the file already held exactly this content and was left untouched (same mtime). */
  readonly written: boolean;
  readonly entries: number;
}

/** The SOA comes within the first lines: never read a whole zone of a million names for it. */
const SERIAL_WINDOW_BYTES = 4096;

/**
 * Writes the export to `path` unless the file already holds the same content. "Changed" is judged
 * on the content itself (sha256 of the new content against the file's), so a restart, a run that
 * changed only other threats or organizations, or a second export of the same mirror leaves the file
 * alone. Comment lines do not count (their counts are as of the last write), and neither does a
 * zone's serial: the new zone is first rendered with the old serial, and only when it differs is
 * it rendered again with the next one.
 */
export async function writeExportFile(path: string, built: BuiltExport): Promise<FileWriteResult> {
  const previousSerial = built.hasSerial ? await serialOfFile(path) : undefined;
  const nextSerial = built.nextSerial(previousSerial);
  const trialSerial = previousSerial ?? nextSerial;
  const existing = await fileExists(path);
  let temp = await writeTempFile(path, built.render(trialSerial), existing ? built.commentPrefix : null);
  if (existing && (await fileDigest(path, built.commentPrefix)) === temp.digest) {
    await discardTempFile(temp);
    return { written: false, entries: built.entries() };
  }
  if (trialSerial !== nextSerial) {
    await discardTempFile(temp);
    temp = await writeTempFile(path, built.render(nextSerial), null);
  }
  try {
    await commitTempFile(temp, path);
  } catch (error) {
    await discardTempFile(temp);
    throw error;
  }
  return { written: true, entries: built.entries() };
}

async function fileExists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}

/** The serial of the zone file at `path`, or undefined when there is none. */
export async function serialOfFile(path: string): Promise<number | undefined> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const buffer = Buffer.alloc(SERIAL_WINDOW_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return rpzSerialOf(buffer.subarray(0, bytesRead).toString('utf8'));
  } finally {
    await handle.close();
  }
}

/** Writes the export to a stream (stdout), waiting for it to drain so memory stays flat. */
export async function writeExportStream(stream: NodeJS.WritableStream, built: BuiltExport): Promise<void> {
  let batch = '';
  const send = async (data: string | Uint8Array): Promise<void> => {
    if (!stream.write(data)) await once(stream, 'drain');
  };
  const flush = async (): Promise<void> => {
    if (batch === '') return;
    const data = batch;
    batch = '';
    await send(data);
  };
  const chunks = built.render(built.nextSerial(undefined));
  if (Symbol.asyncIterator in chunks) {
    for await (const chunk of chunks) {
      if (typeof chunk === 'string') batch += chunk;
      else {
        await flush();
        // A copy: the stream keeps what it is given until written, and the bytes are reused after this.
        await send(Buffer.from(chunk));
      }
      if (batch.length >= 64 * 1024) await flush();
    }
  } else {
    for (const chunk of chunks) {
      batch += chunk;
      if (batch.length >= 64 * 1024) await flush();
    }
  }
  await flush();
}
