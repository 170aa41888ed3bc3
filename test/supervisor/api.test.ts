// The supervisor's API (startChild, terminateChild, restartChild, deleteChild, whichChildren,
// countChildren) and the lifecycle states it exposes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../src/supervisor/clock.ts';
import { SupervisorError, type SupervisorErrorCode } from '../../src/supervisor/errors.ts';
import { crash, killed, normal, shutdown } from '../../src/supervisor/exit-reason.ts';
import type { SupervisorEvent } from '../../src/supervisor/supervisor-events.ts';
import { Supervisor } from '../../src/supervisor/supervisor.ts';
import { abc, FakeChild, gate, settle } from './fake-child.ts';

async function codeOf(promise: Promise<unknown>): Promise<SupervisorErrorCode | 'resolved'> {
  return promise.then(
    () => 'resolved' as const,
    (e: unknown) => {
      if (e instanceof SupervisorError) return e.code;
      throw e;
    },
  );
}

async function running(...children: FakeChild[]): Promise<Supervisor> {
  return Supervisor.start({ strategy: 'one_for_one', name: 'sup' }, children.map((c) => c.spec()), { clock: new FakeClock() });
}

test('startChild appends a child at the end, starts it and returns its handle', async () => {
  const { journal, a, b } = abc();
  const sup = await running(a);
  const handle = await sup.startChild(b.spec({ restart: 'transient' }));
  assert.is(handle, b.current);
  assert.equal(journal, ['start:a', 'start:b']);
  assert.equal(sup.whichChildren(), [
    { id: 'a', state: 'running', restart: 'permanent', type: 'worker' },
    { id: 'b', state: 'running', restart: 'transient', type: 'worker' },
  ]);
});

test('startChild refuses a running id (already_started), a known stopped id (already_present) and a bad spec', async () => {
  const { a } = abc();
  const sup = await running(a);
  assert.is(await codeOf(sup.startChild(a.spec())), 'already_started');
  await sup.terminateChild('a');
  assert.is(await codeOf(sup.startChild(a.spec())), 'already_present');
  assert.is(await codeOf(sup.startChild({ id: 'x', start: a.spec().start, shutdown: -1 })), 'invalid_spec');
});

test('startChild whose start fails rejects with start_failed and keeps nothing', async () => {
  const { a, b } = abc();
  const sup = await running(a);
  b.failNextStarts = 1;
  const error = await sup.startChild(b.spec()).catch((e: unknown) => e);
  assert.ok(error instanceof SupervisorError && error.code === 'start_failed');
  assert.is(error instanceof Error && error.message, 'supervisor "sup": child "b" failed to start: Error: start failed: b');
  assert.equal(sup.whichChildren().map((w) => w.id), ['a']);
});

test('terminateChild stops a child by its shutdown, keeps it as stopped and does not restart it', async () => {
  const { journal, a, b } = abc();
  const sup = await running(a, b);
  journal.length = 0;
  await sup.terminateChild('a');
  await settle();
  assert.equal(journal, ['stop:a']);
  assert.equal(a.current.exitReason, shutdown);
  assert.equal(sup.whichChildren().map((w) => `${w.id}:${w.state}`), ['a:stopped', 'b:running']);
  assert.is(a.starts, 1);
});

test('terminateChild removes a temporary child; an unknown id is not_found', async () => {
  const { a, b } = abc();
  const sup = await Supervisor.start({ strategy: 'one_for_one' }, [a.spec({ restart: 'temporary' }), b.spec()], { clock: new FakeClock() });
  await sup.terminateChild('a');
  assert.equal(sup.whichChildren().map((w) => w.id), ['b']);
  assert.is(await codeOf(sup.terminateChild('zz')), 'not_found');
});

test('restartChild starts a stopped child again and refuses a running one', async () => {
  const { a } = abc();
  const sup = await running(a);
  assert.is(await codeOf(sup.restartChild('a')), 'running');
  await sup.terminateChild('a');
  const handle = await sup.restartChild('a');
  assert.is(handle, a.current);
  assert.is(a.starts, 2);
  assert.is(sup.whichChildren()[0]?.state, 'running');
  assert.is(await codeOf(sup.restartChild('nope')), 'not_found');
});

test('restartChild is not counted by the restart intensity (maxRestarts 0 still allows it)', async () => {
  const { a } = abc();
  const sup = await Supervisor.start({ strategy: 'one_for_one', maxRestarts: 0 }, [a.spec()], { clock: new FakeClock() });
  for (let i = 0; i < 3; i++) {
    await sup.terminateChild('a');
    await sup.restartChild('a');
  }
  assert.is(a.starts, 4);
  assert.is(sup.whichChildren()[0]?.state, 'running');
});

test('restartChild whose start fails leaves the child stopped', async () => {
  const { a } = abc();
  const sup = await running(a);
  await sup.terminateChild('a');
  a.failNextStarts = 1;
  assert.is(await codeOf(sup.restartChild('a')), 'start_failed');
  assert.is(sup.whichChildren()[0]?.state, 'stopped');
});

test('deleteChild forgets a stopped child and refuses a running one', async () => {
  const { a, b } = abc();
  const sup = await running(a, b);
  assert.is(await codeOf(sup.deleteChild('a')), 'running');
  await sup.terminateChild('a');
  await sup.deleteChild('a');
  assert.equal(sup.whichChildren().map((w) => w.id), ['b']);
  assert.is(await codeOf(sup.deleteChild('a')), 'not_found');
  await sup.startChild(a.spec());
  assert.equal(sup.whichChildren().map((w) => w.id), ['b', 'a']);
});

test('countChildren counts specs, running children and each type', async () => {
  const { a, b, c } = abc();
  const sup = await Supervisor.start({ strategy: 'one_for_one' }, [a.spec(), b.spec({ type: 'supervisor' }), c.spec()], { clock: new FakeClock() });
  await sup.terminateChild('c');
  assert.equal(sup.countChildren(), { specs: 3, active: 2, supervisors: 1, workers: 2 });
});

test('lifecycle: a crashed permanent child passes through restarting and ends running', async () => {
  const { a } = abc();
  const sup = await running(a);
  const hold = gate();
  a.gate = hold.promise;
  a.exit(crash(new Error('x')));
  await settle();
  assert.is(sup.whichChildren()[0]?.state, 'restarting');
  hold.open();
  await settle();
  assert.is(sup.whichChildren()[0]?.state, 'running');
});

test('lifecycle: a temporary child that exits is removed; a transient one that exits normally stays stopped', async () => {
  const { a, b } = abc();
  const sup = await Supervisor.start({ strategy: 'one_for_one' }, [a.spec({ restart: 'temporary' }), b.spec({ restart: 'transient' })], { clock: new FakeClock() });
  a.exit(crash(new Error('x')));
  b.exit(normal);
  await settle();
  assert.equal(sup.whichChildren().map((w) => `${w.id}:${w.state}`), ['b:stopped']);
});

test('lifecycle: a child being stopped reads stopping until it exits', async () => {
  const { a } = abc();
  const clock = new FakeClock();
  const sup = await Supervisor.start({ strategy: 'one_for_one' }, [a.spec({ shutdown: 500 })], { clock });
  a.ignoreStop = true;
  const done = sup.terminateChild('a');
  await settle();
  assert.is(sup.whichChildren()[0]?.state, 'stopping');
  clock.advance(500);
  await done;
  assert.is(sup.whichChildren()[0]?.state, 'stopped');
  assert.equal(a.current.exitReason, killed);
});

test('events: child-started for each start, child-exited with the decision, child-restarted with the trigger', async () => {
  const { a } = abc();
  const events: SupervisorEvent[] = [];
  await Supervisor.start({ strategy: 'one_for_one', name: 'sup' }, [a.spec()], { clock: new FakeClock(), onEvent: (e) => events.push(e) });
  a.exit(killed);
  await settle();
  assert.equal(events, [
    { type: 'child-started', supervisor: 'sup', id: 'a' },
    { type: 'child-exited', supervisor: 'sup', id: 'a', reason: killed, willRestart: true },
    { type: 'child-started', supervisor: 'sup', id: 'a' },
    { type: 'child-restarted', supervisor: 'sup', id: 'a', reason: killed, trigger: 'a' },
  ]);
});

test('an onEvent that throws does not disturb supervision; it becomes a SupervisorWarning', async () => {
  const { a } = abc();
  const warnings: string[] = [];
  const onWarning = (w: Error): void => {
    if (w.name === 'SupervisorWarning') warnings.push(w.message);
  };
  process.on('warning', onWarning);
  const sup = await Supervisor.start({ strategy: 'one_for_one', name: 'sup' }, [a.spec()], {
    clock: new FakeClock(),
    onEvent: (e) => {
      if (e.type === 'child-exited') throw new Error('logger broke');
    },
  });
  a.exit(crash(new Error('x')));
  await settle();
  await settle();
  process.off('warning', onWarning);
  assert.is(a.starts, 2);
  assert.is(sup.whichChildren()[0]?.state, 'running');
  assert.equal(warnings, ['supervisor "sup": Error: onEvent threw on child-exited (caused by: Error: logger broke)']);
});

test('after the supervisor exited, API calls reject with not_running', async () => {
  const { a } = abc();
  const sup = await running(a);
  sup.stop();
  await sup.exited;
  assert.is(await codeOf(sup.startChild(new FakeChild('n').spec())), 'not_running');
  assert.is(await codeOf(sup.restartChild('a')), 'not_running');
});

test.run();
