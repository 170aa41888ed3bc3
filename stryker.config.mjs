// `npm run mutate`: mutation testing of the pure protocol core (src/mcp), the harness policy
// (src/harness) and the workspace confinement (workspace.ts, confined-file.ts). Slow, so not part of
// `npm test`; the README's Tests section reports the last score.
//
// The command runner runs test/mutate.ts: the fast unit tests of that code in one process per mutant
// (about 2 s); it says which files and why the property tests are left out.

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'command',
  commandRunner: { command: 'node --import tsx test/mutate.ts' },
  mutate: ['src/mcp/**/*.ts', 'src/harness/**/*.ts', 'src/tools/workspace.ts', 'src/tools/confined-file.ts'],
  ignorePatterns: ['dist', 'bench', 'reports'],
  // Two cores; more would only queue.
  concurrency: 2,
  timeoutMS: 10_000,
  reporters: ['clear-text', 'progress-append-only', 'json', 'html'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  tempDirName: '.stryker-tmp',
};
