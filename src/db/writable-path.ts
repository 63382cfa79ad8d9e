// Before the writer touches the database: can this process write where THREAT_MIRROR_DB points?
//
// SQLite's own answer ("unable to open database file", or a silent read-only open of a file it may
// not write) says neither that it is about permissions nor who needs them. In a container the
// usual cause is a volume owned by root while the program runs as an unprivileged user.
import { accessSync, constants, existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { writerFilesOf } from './database-files.js';

export class UnwritablePathError extends Error {
  override readonly name = 'UnwritablePathError';
}

/** The files the writer creates or writes beside the database, and its folder. */
function pathsToWrite(dbPath: string): string[] {
  const file = resolve(dbPath);
  return [dirname(file), ...writerFilesOf(file).filter((path) => existsSync(path))];
}

/** Throws UnwritablePathError naming the path and the uid/gid that needs write access. */
export function assertWritable(dbPath: string): void {
  for (const path of pathsToWrite(dbPath)) {
    try {
      accessSync(path, constants.W_OK);
    } catch (error) {
      throw unwritable(dbPath, path, error);
    }
  }
}

/** For a failure to create the database's folder: the same message when it is about permissions. */
export function unwritableFolderError(dbPath: string, error: unknown): UnwritablePathError | undefined {
  const code = (error as { code?: string }).code;
  if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS') return undefined;
  return unwritable(dbPath, (error as { path?: string }).path ?? dirname(resolve(dbPath)), error);
}

function unwritable(dbPath: string, path: string, error: unknown): UnwritablePathError {
  const who = `uid ${process.getuid?.() ?? '?'} (gid ${process.getgid?.() ?? '?'})`;
  const code = (error as { code?: string }).code;
  const reason =
    code === 'EROFS'
      ? `${path} is on a read-only file system; the writer needs a writable volume there`
      : `${path} is not writable by ${who}, the user this process runs as; give that user write access (e.g. chown ${process.getuid?.() ?? 'UID'}:${process.getgid?.() ?? 'GID'} on the volume) or point THREAT_MIRROR_DB elsewhere`;
  return new UnwritablePathError(`cannot write the database ${dbPath}: ${reason}`);
}
