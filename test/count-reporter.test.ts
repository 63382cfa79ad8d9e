// The count line `.ci/run` reads must tell the truth: a hook that fails is a failure (vitest marks
// its tests "skipped"), a file that fails to load is a failure, and a todo is not a skip.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURES = join(ROOT, 'test', 'fixtures', 'count-reporter');

it('counts hook errors and files that fail to load as failures, and keeps pending apart from skipped', () => {
  const run = spawnSync(join(ROOT, 'node_modules', '.bin', 'vitest'), ['run', '--config', join(FIXTURES, 'vitest.config.ts')], {
    cwd: FIXTURES,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', CI: '' },
  });
  expect(run.status).toBe(1);
  const lines = run.stdout.trim().split('\n');
  // passed: "passes" and "passes before it"; failed: "fails", the beforeAll, the afterAll, the file
  // that does not load; skipped: skipIf and ctx.skip(); pending: the two under the failed hook, the todo.
  expect(lines.at(-1)).toBe('2 passed, 4 failed, 2 skipped, 3 pending');
});
