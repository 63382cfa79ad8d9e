import { readdirSync } from 'node:fs';
import { configDefaults, defineConfig } from 'vitest/config';
import { CountReporter } from './test/support/count-reporter.js';

// The unit project: tests that start no process or thread, open no socket, start no stand-in and
// need no build; `npm run test:unit` runs them alone, in seconds. test/unit/ holds them, but for two
// files that run something: security-parts (a child node importing the built dist/) and
// zone-names (named-checkzone). Four files elsewhere in test/ qualify as well.
const NOT_UNIT = new Set(['security-parts.test.ts', 'zone-names.test.ts']);
const UNIT = [
  ...readdirSync(new URL('./test/unit/', import.meta.url))
    .filter((name) => name.endsWith('.test.ts') && !NOT_UNIT.has(name))
    .map((name) => `test/unit/${name}`),
  'test/architecture.test.ts',
  'test/url-browser-view.test.ts',
  'test/allowlist-index.test.ts',
  'test/allowlist-view.test.ts',
];

export default defineConfig({
  test: {
    // Integration tests spawn the CLI and servers: give them room on a 2-core CI machine.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    pool: 'forks',
    reporters: ['default', new CountReporter()],
    // `npm test` runs both projects, every file once: integration is everything the unit project is not.
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...UNIT],
          // The CLI tests spawn the compiled program: compile it once before they run.
          globalSetup: ['test/support/build.ts'],
        },
      },
    ],
  },
});
