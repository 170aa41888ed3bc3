// bash's waits on the context's clock: a command is stopped when its timeout passes on that clock (so a
// timeout of an hour is tested without waiting one), and not a moment before.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bashTool } from '../../src/tools/bash.ts';
import { KILL_GRACE_MS } from '../../src/limits.ts';
import { FakeClock } from '../../src/time/fake-clock.ts';
import { guarded } from '../hang-guard.ts';
import { atLeast, allGone, killLeftovers, processesWith, uniqueSleep } from './processes.ts';
import { context, inSandbox } from './sandbox.ts';

const HOUR_S = 3600;

test('a command is stopped when its timeout passes on the context clock, reported as timed out', () =>
  inSandbox({}, async ({ ws }) => {
    const arg = uniqueSleep();
    const clock = new FakeClock();
    try {
      const run = bashTool({ command: `sleep ${arg}`, timeout: HOUR_S }, context(ws, { clock }));
      // The timeout is armed as the command starts: once its sleep runs, the clock decides.
      await atLeast(arg, 1);
      clock.advance(HOUR_S * 1000 - 1);
      assert.ok(processesWith(arg).length > 0, 'stopped before its timeout');
      clock.advance(1);
      // The first process of a PID namespace outlives SIGTERM: the kill that follows is on the clock too.
      clock.advance(KILL_GRACE_MS);
      const r = await guarded(run, 'the timed-out command');
      assert.equal(r, {
        text: `Command timed out after ${HOUR_S} seconds`,
        isError: true,
        structured: { exitCode: null, signal: null, timedOut: true, aborted: false, output: '', truncated: false, notices: [] },
      });
      assert.ok(await allGone(arg), `sleep ${arg} is still running`);
    } finally {
      killLeftovers(arg);
    }
  }));

test.run();
