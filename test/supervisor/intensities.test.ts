// The restart intensity of each level of the tree: documented defaults (README, "Crash semantics"), and
// `--restart-intensity LEVEL=N/SECONDS` changing one level, refusing what it cannot read.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseOptions } from '../../src/cli/options.ts';
import { DEFAULT_TREE_INTENSITIES } from '../../src/limits.ts';
import { parseIntensities } from '../../src/supervisor/intensities.ts';

test('the defaults are the README\'s: root 3/5 s, schedulers 10/2 s, session 10/1 s, task 10/10 s', () => {
  assert.equal(DEFAULT_TREE_INTENSITIES, {
    root: { maxRestarts: 3, periodMs: 5000 },
    schedulers: { maxRestarts: 10, periodMs: 2000 },
    session: { maxRestarts: 10, periodMs: 1000 },
    task: { maxRestarts: 10, periodMs: 10_000 },
  });
});

test('a flag changes its level only; seconds may be fractional', () => {
  const i = parseIntensities(['session=20/2', 'schedulers=5/0.5']);
  assert.equal(i.session, { maxRestarts: 20, periodMs: 2000 });
  assert.equal(i.schedulers, { maxRestarts: 5, periodMs: 500 });
  assert.equal(i.root, { maxRestarts: 3, periodMs: 5000 });
});

test('an unknown level or a malformed value is refused with the accepted form', () => {
  for (const bad of ['sessions=1/1', 'session=1', 'session=-1/1', 'session=1/0', 'session=a/b']) {
    assert.throws(() => parseIntensities([bad]), /LEVEL=RESTARTS\/SECONDS|at least 1 ms/, bad);
  }
});

test('--restart-intensity reaches the server options, and is repeatable', () => {
  const parsed = parseOptions(['--restart-intensity', 'session=4/1', '--restart-intensity', 'task=2/3'], {}, '/ws');
  assert.is(parsed.kind, 'serve');
  if (parsed.kind !== 'serve') return;
  assert.equal(parsed.options.intensities.session, { maxRestarts: 4, periodMs: 1000 });
  assert.equal(parsed.options.intensities.task, { maxRestarts: 2, periodMs: 3000 });
});

test.run();
