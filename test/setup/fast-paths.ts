/**
 * Every in-process suite runs with the Parquet layouts' fast paths taking records from a file's
 * second record on (by default from its 200th: `sinks/fast-path.ts`), so each
 * test of a file's contents checks the code made for its shape as well as the walk, which writes
 * the first record and every record the fast path refuses.
 */
import { fastPaths } from '../../sinks/fast-path.ts';

fastPaths.makeAfter = 2;
