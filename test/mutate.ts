// The test command of `npm run mutate` (stryker.config.mjs): the fast unit tests of the mutated code —
// src/mcp, src/harness, the workspace confinement — in ONE process, so each mutant costs one tsx start,
// and stopping at the first failure (a mutant is killed as soon as one test fails).
// Usage: node --import tsx test/mutate.ts   (exit code 0 = every test passed)
// MUTATE_TESTS=<substring>[,<substring>…] narrows the files further, for a run scoped with `--mutate` to
// modules whose other tests cannot kill their mutants anyway (a faster, slightly conservative score).

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'uvu/parse';
import { run } from 'uvu/run';

/** The unit tests of the scoped code. test/mcp/properties.test.ts is left out: 7 s a run, per mutant. */
export const FAST_UNIT_TESTS = /(?:mcp\/(?:arguments|handle|jsonrpc|limits|transcript-access)|harness\/policy|tools\/(?:workspace|confined-file))\.test\.ts$/;

const here = path.dirname(fileURLToPath(import.meta.url));
const { suites: all } = await parse(here, FAST_UNIT_TESTS, { cwd: here });
if (all.length !== 8) throw new Error(`expected the 8 fast unit test files, found ${all.length}: ${all.map((s) => s.name).join(', ')}`);
const only = process.env.MUTATE_TESTS;
const suites = only === undefined ? all : all.filter((s) => only.split(',').some((part) => s.name.includes(part)));
if (suites.length === 0) throw new Error(`MUTATE_TESTS=${only} matches none of ${all.map((s) => s.name).join(', ')}`);
await run(suites, { bail: true });
