// Prints the plain "N passed, N failed, N skipped, N pending" line last, the form `.ci/run` reads
// (and refuses unless only "passed" is above zero).
//
// failed:  failed tests, plus every error outside a test: a file that fails to load, a beforeAll or
//          afterAll that throws (vitest marks the tests under a failed beforeAll "skipped": they are
//          not), and unhandled errors.
// skipped: tests the code chose to skip (`skip`, `skipIf`, `ctx.skip()`).
// pending: tests that never reached a verdict: `todo`, under a hook that failed, or unfinished.
import type { Reporter, TestCase, TestModule, TestSuite } from 'vitest/node';

export interface TestCounts {
  passed: number;
  failed: number;
  skipped: number;
  pending: number;
}

export function countTests(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): TestCounts {
  const counts: TestCounts = { passed: 0, failed: unhandledErrors.length, skipped: 0, pending: 0 };
  for (const testModule of testModules) {
    counts.failed += testModule.errors().length;
    for (const suite of testModule.children.allSuites()) counts.failed += suite.errors().length;
    for (const testCase of testModule.children.allTests()) counts[verdictOf(testCase)] += 1;
  }
  return counts;
}

export function formatCounts(counts: TestCounts): string {
  return `${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped, ${counts.pending} pending`;
}

function verdictOf(testCase: TestCase): keyof TestCounts {
  const result = testCase.result();
  if (result.state === 'passed' || result.state === 'failed') return result.state;
  if (result.state === 'pending' || testCase.options.mode === 'todo') return 'pending';
  return underFailedHook(testCase) ? 'pending' : 'skipped';
}

/** True when a suite or the module around the test has an error of its own: a hook that threw. */
function underFailedHook(testCase: TestCase): boolean {
  let parent: TestSuite | TestModule = testCase.parent;
  for (;;) {
    if (parent.errors().length > 0) return true;
    if (parent.type === 'module') return false;
    parent = parent.parent;
  }
}

export class CountReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    process.stdout.write(`\n${formatCounts(countTests(testModules, unhandledErrors))}\n`);
  }
}
