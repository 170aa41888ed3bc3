// Stopping: order, the three shutdown modes, hanging children, and exits that arrive meanwhile.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../src/supervisor/clock.ts';
import { SupervisorError } from '../../src/supervisor/errors.ts';
import { crash, killed, shutdown } from '../../src/supervisor/exit-reason.ts';
import type { SupervisorEvent } from '../../src/supervisor/supervisor-events.ts';
import { Supervisor } from '../../src/supervisor/supervisor.ts';
import { abc, gate, settle } from './fake-child.ts';

test('stop() stops children in reverse start order, then exits shutdown', async () => {
  const { journal, a, b, c } = abc();
  const events: SupervisorEvent[] = [];
  const sup = await Supervisor.start({ strategy: 'one_for_one', name: 'sup' }, [a.spec(), b.spec(), c.spec()], { clock: new FakeClock(), onEvent: (e) => events.push(e) });
  journal.length = 0;
  sup.stop();
  assert.equal(await sup.exited, shutdown);
  assert.equal(journal, ['stop:c', 'stop:b', 'stop:a']);
  assert.equal(sup.whichChildren().map((w) => `${w.id}:${w.state}`), ['a:stopped', 'b:stopped', 'c:stopped']);
  assert.equal(
    events.filter((e) => e.type === 'child-stopped').map((e) => e.type === 'child-stopped' && [e.id, e.reason.kind, e.timedOut]),
    [['c', 'shutdown', false], ['b', 'shutdown', false], ['a', 'shutdown', false]],
  );
  assert.equal(events.at(-1), { type: 'supervisor-exited', supervisor: 'sup', reason: shutdown });
});

test('brutal_kill: the child is killed at once, never asked to stop', async () => {
  const { journal, a } = abc();
  const sup = await Supervisor.start({ strategy: 'one_for_one' }, [a.spec({ shutdown: 'brutal_kill' })], { clock: new FakeClock() });
  journal.length = 0;
  sup.stop();
  await sup.exited;
  assert.equal(journal, ['kill:a']);
  assert.equal(a.current.exitReason, killed);
});

test('a timeout: a child that ignores stop() is killed after exactly its shutdown ms, then the next one is stopped', async () => {
  const { journal, a, b } = abc();
  const clock = new FakeClock();
  const events: SupervisorEvent[] = [];
  const sup = await Supervisor.start({ strategy: 'one_for_one' }, [a.spec(), b.spec({ shutdown: 1000 })], { clock, onEvent: (e) => events.push(e) });
  b.ignoreStop = true;
  journal.length = 0;
  sup.stop();
  await settle();
  assert.equal(journal, ['stop:b']);
  clock.advance(999);
  await settle();
  assert.equal(journal, ['stop:b']);
  clock.advance(1);
  await settle();
  assert.equal(journal, ['stop:b', 'kill:b', 'stop:a']);
  assert.equal(await sup.exited, shutdown);
  assert.ok(events.some((e) => e.type === 'child-stopped' && e.id === 'b' && e.timedOut && e.reason.kind === 'killed'));
});

test('a timeout: a child that stops in time is not killed and its timer is cleared', async () => {
  const { journal, a } = abc();
  const clock = new FakeClock();
  const sup = await Supervisor.start({ strategy: 'one_for_one' }, [a.spec({ shutdown: 1000 })], { clock });
  journal.length = 0;
  sup.stop();
  await sup.exited;
  assert.equal(journal, ['stop:a']);
  assert.is(clock.pendingTimers, 0);
});

test('infinity: a hanging child is waited for, however long, and never killed', async () => {
  const { journal, a, b } = abc();
  const clock = new FakeClock();
  const sup = await Supervisor.start({ strategy: 'one_for_one' }, [a.spec(), b.spec({ shutdown: 'infinity' })], { clock });
  b.ignoreStop = true;
  journal.length = 0;
  sup.stop();
  let exited = false;
  void sup.exited.then(() => (exited = true));
  clock.advance(3_600_000);
  await settle();
  assert.equal(journal, ['stop:b']);
  assert.is(exited, false);
  assert.equal(sup.whichChildren().map((w) => w.state), ['running', 'stopping']);
  b.exit(shutdown);
  await settle();
  assert.equal(journal, ['stop:b', 'stop:a']);
  assert.is(exited, true);
});

test('a child that crashes while the supervisor is stopping is not restarted', async () => {
  const { journal, a, b, c } = abc();
  const sup = await Supervisor.start({ strategy: 'one_for_all' }, [a.spec(), b.spec(), c.spec({ shutdown: 'infinity' })], { clock: new FakeClock() });
  c.ignoreStop = true;
  sup.stop();
  await settle();
  a.exit(crash(new Error('during shutdown')));
  await settle();
  c.exit(shutdown);
  assert.equal(await sup.exited, shutdown);
  assert.equal([a.starts, b.starts, c.starts], [1, 1, 1]);
  assert.equal(journal.filter((entry) => entry.startsWith('start:')), ['start:a', 'start:b', 'start:c']);
});

test('a crash queued before stop() is not restarted either', async () => {
  const { a, b } = abc();
  const sup = await Supervisor.start({ strategy: 'one_for_one' }, [a.spec(), b.spec()], { clock: new FakeClock() });
  a.exit(crash(new Error('x')));
  sup.stop();
  assert.equal(await sup.exited, shutdown);
  assert.is(a.starts, 1);
});

test('kill() kills every child at once in reverse order and exits killed, even during a hanging stop', async () => {
  const { journal, a, b, c } = abc();
  const sup = await Supervisor.start({ strategy: 'one_for_one' }, [a.spec(), b.spec(), c.spec({ shutdown: 'infinity' })], { clock: new FakeClock() });
  c.ignoreStop = true;
  journal.length = 0;
  sup.stop();
  await settle();
  sup.kill();
  assert.equal(await sup.exited, killed);
  assert.equal(journal, ['stop:c', 'kill:c', 'kill:b', 'kill:a']);
  assert.equal(sup.whichChildren().map((w) => w.state), ['stopped', 'stopped', 'stopped']);
  await settle();
  assert.equal(journal.length, 4, 'the interrupted stop does nothing more');
});

test('kill() while a restart is starting a child: the late incarnation is killed as it arrives', async () => {
  const { journal, a } = abc();
  const sup = await Supervisor.start({ strategy: 'one_for_one' }, [a.spec()], { clock: new FakeClock() });
  const hold = gate();
  a.gate = hold.promise;
  a.exit(crash(new Error('x')));
  await settle();
  sup.kill();
  assert.equal(await sup.exited, killed);
  hold.open();
  await settle();
  assert.equal(journal, ['start:a', 'start:a', 'kill:a']);
  assert.equal(a.current.exitReason, killed);
  assert.is(sup.whichChildren()[0]?.state, 'stopped');
});

test('stop() twice stops once; API calls while stopping are refused with not_running', async () => {
  const { journal, a } = abc();
  const sup = await Supervisor.start({ strategy: 'one_for_one', name: 'sup' }, [a.spec({ shutdown: 'infinity' })], { clock: new FakeClock() });
  a.ignoreStop = true;
  journal.length = 0;
  sup.stop();
  sup.stop();
  const refused = await sup.terminateChild('a').catch((e: unknown) => e);
  assert.instance(refused, SupervisorError);
  assert.is(refused instanceof SupervisorError && refused.code, 'not_running');
  assert.is(refused instanceof SupervisorError && refused.message, 'supervisor "sup": is stopping');
  a.exit(shutdown);
  await sup.exited;
  assert.equal(journal, ['stop:a']);
});

test.run();
