// What a test started, undone after it in a fixed order whatever the order it was started in:
// processes stop first (so nothing writes into a folder being removed or calls a closed server),
// then servers close, then temporary folders go. One afterEach for all, so the order does not
// depend on which support module a test file happens to import first.
import { afterEach } from 'vitest';

export type CleanupPhase = 'processes' | 'servers' | 'folders';
const PHASES: readonly CleanupPhase[] = ['processes', 'servers', 'folders'];
const pending: Record<CleanupPhase, Array<() => unknown>> = { processes: [], servers: [], folders: [] };

afterEach(async () => {
  const errors: unknown[] = [];
  for (const phase of PHASES) {
    for (const undo of pending[phase].splice(0).reverse()) {
      try {
        await undo();
      } catch (error) {
        errors.push(error);
      }
    }
  }
  if (errors.length > 0) throw new AggregateError(errors, 'cleanup after the test failed');
});

/** Runs `undo` after the current test, in its phase, last registered first. */
export function afterThisTest(phase: CleanupPhase, undo: () => unknown): void {
  pending[phase].push(undo);
}
