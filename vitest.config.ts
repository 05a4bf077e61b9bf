import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Two projects of the same suites. `npm test` runs "fast": every suite that runs in the test's own
 * process. `npm run test:slow` runs "slow": the suites whose time goes to other processes and clocks.
 * A file named on the command line (`npx vitest run test/cli/file.test.ts`) is found in either.
 *
 * The rule: a new test that spawns the CLI or another node process, kills a process or waits on real
 * timers goes in a file under test/cli/, and every file there is slow. SLOW_ELSEWHERE lists the few
 * slow files that stay beside the code they test (and the two longest in-process suites); a new slow
 * test goes under test/cli/, not onto it.
 * (A handful of fast suites start one short child among many in-process tests; they stay fast.)
 */
const SLOW_ELSEWHERE = [
  // each test runs a recipe as its own node process
  'test/recipes/recipes.test.ts',
  // a child export killed at points of its run, and a disk filled under it
  'test/export/crash.test.ts',
  // The two longest in-process suites (70 s and 40 s of a CI run): npm test stays under five
  // minutes on two cores. Every operation in both dialects, published twice, read by three readers;
  // and compactions of datasets by day, three of them killed and finished.
  'test/sinks/dataset-nested-readers.test.ts',
  'test/export/dataset-tools.test.ts',
];
const SLOW = ['test/cli/**/*.test.ts', ...SLOW_ELSEWHERE];

const ALL = ['test/**/*.test.ts', 'src/**/*.test.ts', 'sinks/**/*.test.ts'];
// test/e2e needs more than npm (redis-server, …): `npm run test:e2e` (vitest.e2e.config.ts).
const NOT_HERE = [...configDefaults.exclude, 'test/e2e/**'];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Suites start their own sandbox servers on port 0; two workers match the 2-core CI machine.
    maxWorkers: 2,
    // The Parquet layouts' fast paths from a file's second record on, in the suites' own processes.
    setupFiles: ['test/setup/fast-paths.ts'],
    projects: [
      { extends: true, test: { name: 'fast', include: ALL, exclude: [...NOT_HERE, ...SLOW] } },
      { extends: true, test: { name: 'slow', include: SLOW, exclude: NOT_HERE } },
    ],
  },
});
