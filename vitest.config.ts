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
    // CI (a 2-core machine running two test files at once, browsers included): a test that fails is run
    // again, up to twice, before it counts as failed. It still fails when it fails every time. This absorbs
    // load-dependent flakes of clean-clone runs while they are found and fixed at their cause (each one
    // seen so far is: the web-scripts chart window, the status-pages mail sent twice, ssh2's unreadable
    // keys, the read-only sweep's length); locally (no CI) a failure counts at once. A test that shares a
    // server with others must start afresh when retried (its own page, addresses, ids, marks).
    retry: process.env.CI ? 2 : 0,
    pool: 'forks',
    // Two cores: keep parallelism modest so timing-sensitive tests (crash, e2e) are not starved.
    maxWorkers: 2,
    // CI asks for a JSON report too, to print one plain summary line.
    ...(process.env.BELFRY_VITEST_JSON
      ? { reporters: ['default', 'json'], outputFile: { json: process.env.BELFRY_VITEST_JSON } }
      : {}),
  },
});
