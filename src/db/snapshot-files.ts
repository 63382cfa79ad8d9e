// Where a snapshot's files go: FILE, its manifest FILE.json, and both as .partial while written.
// Apart from snapshot-copy.ts so that the config can check them without loading the SQLite driver.

/** The manifest's path: FILE.json beside FILE. */
export function manifestPathFor(snapshotPath: string): string {
  return `${snapshotPath}.json`;
}

/** The files written beside the snapshot: its manifest, and both while they are being written. */
export function filesBesideSnapshot(snapshotPath: string): string[] {
  return [manifestPathFor(snapshotPath), `${snapshotPath}.partial`, `${manifestPathFor(snapshotPath)}.partial`];
}
