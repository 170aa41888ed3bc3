// Property hunt: runs a test file's fast-check properties under another seed and many more runs, to find
// the rare counterexample a random seed would one day draw in CI (docs/testing.md, "Property hunts").
//
//   FC_SEED=424242 FC_RUNS_MULT=20 NODE_OPTIONS="--import ./scripts/property-hunt/register.mjs" \
//     node --import tsx test/cluster/forward.test.ts
//
// Preloaded, this file registers itself as a module hook that hands every `import 'fast-check'` the
// wrapper in fast-check.mjs (which reads the FC_* variables); the wrapper's own import gets the real one.
// Not part of `npm test`: nothing in test/ depends on it.

import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const WRAPPER = new URL('./fast-check.mjs', import.meta.url).href;

/** Module hook: `fast-check` is the wrapper, except for the wrapper itself. */
export async function resolve(specifier, context, next) {
  if (specifier === 'fast-check' && context.parentURL !== WRAPPER) return { url: WRAPPER, format: 'module', shortCircuit: true };
  return next(specifier, context);
}

// Run as a preload on the main thread; the hooks thread loads this file again, only for `resolve`.
if (isMainThread) register(import.meta.url);
