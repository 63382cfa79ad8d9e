// Undoing what was acquired (a lock, a connection, a thread), last acquired first. One releaser
// that throws must not leave the ones before it undone: the database and its writer lock would
// stay open in a process that goes on (graphile-worker's withReleasers does the same).

export type Releaser = () => Promise<void> | void;

/** Runs every releaser, last first, even when some throw; then throws the first error, if any. */
export async function releaseAll(releasers: Releaser[]): Promise<void> {
  let failure: { error: unknown } | undefined;
  for (const releaser of releasers.splice(0).reverse()) {
    try {
      await releaser();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
}
