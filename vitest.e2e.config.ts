import { defineConfig } from 'vitest/config';

// End-to-end suites that need more than npm (a real redis-server, …): `npm run test:e2e`, after `npm test`.
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
  },
});
