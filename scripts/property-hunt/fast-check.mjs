// fast-check as the tests import it, but each `fc.assert` runs under the hunt's seed and more runs
// (scripts/property-hunt/register.mjs routes `import fc from 'fast-check'` here):
//   FC_SEED       the seed of the file's first property; its n-th property gets FC_SEED + n - 1
//                 (unset: fast-check's own, or the file's pinned seed)
//   FC_RUNS_MULT  numRuns is the file's own numRuns times this (default 20) ...
//   FC_MIN_RUNS   ... and at least this (default 2000; also used where the file sets none)
//   FC_MAX_RUNS   ... and at most this (default: no cap), for properties that start servers per run
// A failure prints the seed and the assertion that failed (fast-check's message keeps it in `cause`).

import * as real from 'fast-check';

const env = process.env;
const seed = env.FC_SEED === undefined ? undefined : Number(env.FC_SEED);
const mult = Number(env.FC_RUNS_MULT ?? 20);
const min = Number(env.FC_MIN_RUNS ?? 2000);
const max = Number(env.FC_MAX_RUNS ?? Infinity);
let asserted = 0;

export function assert(property, params = {}) {
  const own = params.numRuns;
  const numRuns = Math.min(max, own === undefined ? min : Math.max(min, own * mult));
  const hunted = { ...params, numRuns };
  delete hunted.path;
  if (seed !== undefined) hunted.seed = seed + asserted;
  asserted += 1;
  process.stderr.write(`[property-hunt] property ${asserted}: seed ${hunted.seed} numRuns ${numRuns} (the file's: seed ${params.seed}, numRuns ${own})\n`);
  const report = (err) => {
    process.stderr.write(`[property-hunt] property ${asserted} failed under seed ${hunted.seed}: ${err?.cause?.message ?? err?.cause ?? err?.message}\n`);
    throw err;
  };
  try {
    const result = real.assert(property, hunted);
    return result instanceof Promise ? result.catch(report) : result;
  } catch (err) {
    return report(err);
  }
}

export * from 'fast-check';
export default { ...real.default, assert };
