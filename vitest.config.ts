import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // One Cassandra node on a 2-core machine: files run one at a time so
    // concurrency tests measure the node, not the neighbouring test file.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    env: { NODE_ENV: 'test' },
  },
});
