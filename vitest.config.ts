import { defineConfig } from 'vitest/config';
import { CountReporter } from './test/support/count-reporter.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/build.ts'],
    // Integration tests spawn the CLI and servers: give them room on a 2-core CI machine.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    pool: 'forks',
    reporters: ['default', new CountReporter()],
  },
});
