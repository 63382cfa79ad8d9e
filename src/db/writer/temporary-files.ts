// Where SQLite puts its temporary files for the writer: beside the database.

/**
 * SQLite's temporary files (the sort of a deferred index build spills to one) go in the database's
 * own folder unless SQLITE_TMPDIR says otherwise: a hardened container (`docker run --read-only`)
 * has no writable /tmp, and there the build failed with "disk I/O error" (found by the container
 * check). SQLite reads the variable once per process, at its first temporary file. Only the main
 * thread's process.env is the process's environment (a worker thread's is a copy), so the client
 * sets it before it starts the writer thread.
 */
export function placeTemporaryFilesBeside(dbFolder: string): void {
  process.env.SQLITE_TMPDIR ??= dbFolder;
}
