// How many threads a pool of workers gets by default: the scheduler's and the tool pool's.

import os from 'node:os';
import { MIN_DEFAULT_THREADS } from '../limits.ts';

/** Which the README and `--help` spell "one per core, at least two". */
export const DEFAULT_THREADS_RULE = `one per core, at least ${MIN_DEFAULT_THREADS}`;

/** One thread per core, at least MIN_DEFAULT_THREADS. */
export function defaultThreadCount(): number {
  return Math.max(MIN_DEFAULT_THREADS, os.availableParallelism());
}
