import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'server/**/*.test.ts',
      'electron/**/*.test.ts',
      'renderer/**/*.test.{ts,tsx}',
      'test/**/*.test.ts',
      'scripts/**/*.test.ts',
    ],
    setupFiles: ['test/helpers/setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // expect.poll waits up to 10 s (vitest's default is 1 s): a UI step on a loaded CI machine, click →
    // fetch → render, can take longer than a second, and a poll that passes returns at once anyway.
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    // Two cores: keep parallelism modest so timing-sensitive tests (crash, e2e) are not starved.
    maxWorkers: 2,
    // CI asks for a JSON report too, to print one plain summary line.
    ...(process.env.BELFRY_VITEST_JSON
      ? { reporters: ['default', 'json'], outputFile: { json: process.env.BELFRY_VITEST_JSON } }
      : {}),
  },
});
