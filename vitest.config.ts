import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts', 'sinks/**/*.test.ts'],
    // test/e2e needs more than npm (redis-server, …): `npm run test:e2e` (vitest.e2e.config.ts).
    exclude: [...configDefaults.exclude, 'test/e2e/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Suites start their own sandbox servers on port 0; two workers match the 2-core CI machine.
    maxWorkers: 2,
  },
});
