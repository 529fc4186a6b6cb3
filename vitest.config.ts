import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/{unit,renderer,api,cli,store,agents}/**/*.test.ts'],
    // Each file starts real servers and child processes; two cores run two files at once.
    fileParallelism: true,
    maxWorkers: 2,
    testTimeout: 30_000,
    // The JSON report lets CI print a one-line summary of what ran.
    reporters: ['default', ['json', { outputFile: 'test-results/vitest.json' }]],
    hookTimeout: 30_000,
  },
});
