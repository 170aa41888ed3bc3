import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor } from 'xstate';
import { ChildLifecycle, childLifecycleMachine, LIFECYCLE_STATES, type LifecycleEvent, type LifecycleState } from '../../src/supervisor/lifecycle.ts';

function walk(events: LifecycleEvent['type'][]): LifecycleState[] {
  const lifecycle = new ChildLifecycle('x');
  return [lifecycle.state, ...events.map((e) => lifecycle.send(e))];
}

test('a child starts in starting and runs after STARTED', () => {
  assert.equal(walk(['STARTED']), ['starting', 'running']);
});

test('a crash-and-restart passes through restarting back to running', () => {
  assert.equal(walk(['STARTED', 'RESTART', 'STARTED']), ['starting', 'running', 'restarting', 'running']);
});

test('a failed restart stays restarting until a retry starts it', () => {
  assert.equal(walk(['STARTED', 'RESTART', 'START_FAILED', 'STARTED']), ['starting', 'running', 'restarting', 'restarting', 'running']);
});

test('a graceful stop goes through stopping to stopped, and restartChild can bring it back', () => {
  assert.equal(walk(['STARTED', 'STOP', 'STOPPED', 'RESTART', 'STARTED']), ['starting', 'running', 'stopping', 'stopped', 'restarting', 'running']);
});

test('an exit that is not restarted ends stopped', () => {
  assert.equal(walk(['STARTED', 'EXITED']), ['starting', 'running', 'stopped']);
});

test('a failed first start and an exceeded intensity end failed', () => {
  assert.equal(walk(['START_FAILED']), ['starting', 'failed']);
  assert.equal(walk(['STARTED', 'GIVE_UP']), ['starting', 'running', 'failed']);
  assert.equal(walk(['STARTED', 'RESTART', 'GIVE_UP']), ['starting', 'running', 'restarting', 'failed']);
});

test('a kill takes a running or restarting child straight to stopped', () => {
  assert.equal(walk(['STARTED', 'STOPPED']), ['starting', 'running', 'stopped']);
  assert.equal(walk(['STARTED', 'RESTART', 'STOPPED']), ['starting', 'running', 'restarting', 'stopped']);
});

test('failed is final: nothing moves it', () => {
  const lifecycle = new ChildLifecycle('db');
  lifecycle.send('START_FAILED');
  for (const e of ['STARTED', 'RESTART', 'STOP', 'STOPPED'] as const) assert.is(lifecycle.can(e), false, e);
});

test('an event the state does not accept throws, naming the child, the event and the state', () => {
  const lifecycle = new ChildLifecycle('db');
  assert.throws(() => lifecycle.send('EXITED'), (e: Error) => e.message === 'child "db": EXITED is not allowed in state starting');
  assert.is(lifecycle.state, 'starting');
});

test('every state and event moves exactly as a running xstate actor of the same machine does', () => {
  const events: LifecycleEvent['type'][] = ['STARTED', 'START_FAILED', 'EXITED', 'RESTART', 'STOP', 'STOPPED', 'GIVE_UP'];
  // Reach each state along a path, then try every event from it, on both.
  const paths: Record<LifecycleState, LifecycleEvent['type'][]> = {
    starting: [], running: ['STARTED'], restarting: ['STARTED', 'RESTART'], stopping: ['STARTED', 'STOP'], stopped: ['STARTED', 'EXITED'], failed: ['START_FAILED'],
  };
  for (const state of LIFECYCLE_STATES) {
    for (const event of events) {
      const lifecycle = new ChildLifecycle('x');
      const actor = createActor(childLifecycleMachine).start();
      for (const step of paths[state]) {
        lifecycle.send(step);
        actor.send({ type: step });
      }
      assert.is(lifecycle.state, state);
      const accepted = actor.getSnapshot().can({ type: event });
      assert.is(lifecycle.can(event), accepted, `${state} + ${event}`);
      if (accepted) {
        actor.send({ type: event });
        assert.is(lifecycle.send(event), actor.getSnapshot().value, `${state} + ${event}`);
      }
      actor.stop();
    }
  }
});

test.run();
