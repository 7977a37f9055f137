import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql 16 has no "exports" map: Node loads its CJS build for our dependencies while Vite would
    // pick the ESM one for our sources, and two graphql realms break instanceof checks. Use one.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // The cluster's own tests run with `npm run test:cluster` (vitest.cluster.config.ts).
    exclude: ['test/cluster/**', 'node_modules/**'],
    globalSetup: ['test/global-setup.ts'],
    // One Cassandra node on a 2-core machine: files run one at a time so
    // concurrency tests measure the node, not the neighbouring test file.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    env: { NODE_ENV: 'test' },
  },
});
