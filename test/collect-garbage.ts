// A full garbage collection on demand, for tests of what must hold after the collector ran (an object kept
// alive by the code under test only through a weak reference is gone after it). Not a *.test.ts file.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
// A context made after the flag is set has `gc`; the flag is not unset, so the function stays usable.
const gc = runInNewContext('gc') as () => void;

/** Runs the collector twice with a macrotask between (finalizers and weak references settle in between). */
export async function collectGarbage(): Promise<void> {
  gc();
  await new Promise((resolve) => setTimeout(resolve, 10));
  gc();
}
