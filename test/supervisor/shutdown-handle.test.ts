// The shutdown protocol for one handle, including handles that break the ChildHandle contract.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ChildHandle } from '../../src/supervisor/child-spec.ts';
import { FakeClock } from '../../src/supervisor/clock.ts';
import { describeExit, type ExitReason, killed, normal, shutdown } from '../../src/supervisor/exit-reason.ts';
import { exitOf, shutdownHandle } from '../../src/supervisor/shutdown.ts';
import { FakeChild, settle } from './fake-child.ts';

function handleWith(exited: Promise<ExitReason>, stop: () => void, kill: () => void): ChildHandle {
  return { exited, stop, kill };
}

test('a child that already exited settles at once with its own reason', async () => {
  const child = new FakeChild('a');
  const handle = await child.start();
  handle.exit(normal);
  assert.equal(await shutdownHandle(handle, 1000, new FakeClock()), { reason: normal, timedOut: false });
});

test('a stop that is obeyed before the deadline reports shutdown and leaves no timer', async () => {
  const clock = new FakeClock();
  const handle = await new FakeChild('a').start();
  assert.equal(await shutdownHandle(handle, 1000, clock), { reason: shutdown, timedOut: false });
  assert.is(clock.pendingTimers, 0);
});

test('a stop that is ignored is followed by a kill at the deadline, reported as timedOut', async () => {
  const clock = new FakeClock();
  const child = new FakeChild('a');
  child.ignoreStop = true;
  const handle = await child.start();
  const outcome = shutdownHandle(handle, 300, clock);
  await settle();
  clock.advance(300);
  assert.equal(await outcome, { reason: killed, timedOut: true });
  assert.equal(child.journal, ['start:a', 'stop:a', 'kill:a']);
});

test('exited rejecting is read as a crash', async () => {
  const reason = await exitOf(handleWith(Promise.reject(new Error('thread died')), () => undefined, () => undefined));
  assert.is(describeExit(reason), 'crash: Error: thread died');
});

test('a stop() that throws is followed by a kill', async () => {
  let resolve: (r: ExitReason) => void = () => undefined;
  const exited = new Promise<ExitReason>((r) => (resolve = r));
  const calls: string[] = [];
  const handle = handleWith(
    exited,
    () => {
      calls.push('stop');
      throw new Error('stop broke');
    },
    () => {
      calls.push('kill');
      resolve(killed);
    },
  );
  assert.equal(await shutdownHandle(handle, 'infinity', new FakeClock()), { reason: killed, timedOut: false });
  assert.equal(calls, ['stop', 'kill']);
});

test('a kill() that throws ends the wait with a crash saying the child may still run', async () => {
  const handle = handleWith(new Promise<ExitReason>(() => undefined), () => undefined, () => {
    throw new Error('kill broke');
  });
  const outcome = await shutdownHandle(handle, 'brutal_kill', new FakeClock());
  assert.is(describeExit(outcome.reason), 'crash: Error: ChildHandle.kill() threw; the child may still be running (caused by: Error: kill broke)');
});

test.run();
