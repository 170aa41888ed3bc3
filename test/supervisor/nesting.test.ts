// Trees: a supervisor as another's child, escalation up to the root, and the root's give-up.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../src/supervisor/clock.ts';
import { crash, type ExitReason, killed, shutdown } from '../../src/supervisor/exit-reason.ts';
import { startRoot } from '../../src/supervisor/root.ts';
import type { SupervisorEvent } from '../../src/supervisor/supervisor-events.ts';
import { Supervisor } from '../../src/supervisor/supervisor.ts';
import { abc, FakeChild, settle } from './fake-child.ts';

test('a nested supervisor starts its subtree as part of its parent start order', async () => {
  const { journal, a, b, c } = abc();
  const root = await Supervisor.start({ strategy: 'one_for_one', name: 'root' }, [a.spec(), Supervisor.childSpec('inner', { strategy: 'one_for_one' }, [b.spec(), c.spec()]), new FakeChild('d', journal).spec()], {
    clock: new FakeClock(),
  });
  assert.equal(journal, ['start:a', 'start:b', 'start:c', 'start:d']);
  assert.equal(root.whichChildren().map((w) => `${w.id}:${w.type}`), ['a:worker', 'inner:supervisor', 'd:worker']);
});

test('stopping the parent stops the nested subtree depth-first, all in reverse start order', async () => {
  const { journal, a, b, c } = abc();
  const root = await Supervisor.start({ strategy: 'one_for_one', name: 'root' }, [a.spec(), Supervisor.childSpec('inner', { strategy: 'one_for_one' }, [b.spec(), c.spec()])], { clock: new FakeClock() });
  journal.length = 0;
  root.stop();
  assert.equal(await root.exited, shutdown);
  assert.equal(journal, ['stop:c', 'stop:b', 'stop:a']);
});

test('an inner supervisor past its intensity exits with a crash, and its parent restarts the whole subtree', async () => {
  const { journal, a, b, c } = abc();
  const clock = new FakeClock();
  const events: SupervisorEvent[] = [];
  const options = { clock, onEvent: (e: SupervisorEvent) => events.push(e) };
  const root = await Supervisor.start({ strategy: 'one_for_one', name: 'root' }, [a.spec(), Supervisor.childSpec('inner', { strategy: 'one_for_one', maxRestarts: 1 }, [b.spec(), c.spec()], options)], options);
  b.exit(crash(new Error('once')));
  await settle();
  journal.length = 0;
  b.exit(crash(new Error('twice')));
  await settle();
  assert.equal(journal, ['stop:c', 'start:b', 'start:c']);
  const innerExit = events.find((e) => e.type === 'child-exited' && e.id === 'inner');
  assert.ok(innerExit && innerExit.type === 'child-exited' && innerExit.reason.kind === 'crash' && innerExit.willRestart);
  assert.equal(root.whichChildren().map((w) => w.state), ['running', 'running']);
  assert.is(b.starts, 3);
});

test('escalation reaches the root: onGiveUp is called once with a message naming every level and the first error', async () => {
  const { a, b } = abc();
  const clock = new FakeClock();
  const calls: [string, ExitReason][] = [];
  const root = await startRoot(
    { strategy: 'one_for_one', maxRestarts: 0 },
    [a.spec(), Supervisor.childSpec('sessions', { strategy: 'one_for_one', maxRestarts: 0 }, [b.spec()], { clock })],
    { clock, onGiveUp: (message, reason) => calls.push([message, reason]) },
  );
  b.exit(crash(new Error('database connection refused')));
  const reason = await root.exited;
  await settle();
  assert.is(reason.kind, 'crash');
  assert.is(calls.length, 1);
  assert.is(
    calls[0]?.[0],
    'super-pi gave up: the root supervisor "root" exited (crash: RestartIntensityError: supervisor "root" gave up: child "sessions" crashed, ' +
      'and restarting it would make 1 restart within 5000 ms, more than the 0 its restart intensity allows ' +
      '(caused by: RestartIntensityError: supervisor "sessions" gave up: child "b" crashed, and restarting it would make 1 restart within 5000 ms, ' +
      'more than the 0 its restart intensity allows (caused by: Error: database connection refused))); not restarting it',
  );
  assert.is(calls[0]?.[1], reason);
  assert.equal(root.whichChildren().map((w) => `${w.id}:${w.state}`), ['a:stopped', 'sessions:failed']);
});

test('a root stopped on purpose does not call onGiveUp', async () => {
  const { a } = abc();
  let called = false;
  const root = await startRoot({ strategy: 'one_for_one' }, [a.spec()], { clock: new FakeClock(), onGiveUp: () => (called = true) });
  root.stop();
  assert.equal(await root.exited, shutdown);
  await settle();
  assert.is(called, false);
  assert.is(root.name, 'root');
});

test('a killed root calls onGiveUp (killed is abnormal)', async () => {
  const { a } = abc();
  const messages: string[] = [];
  const root = await startRoot({ strategy: 'one_for_one', name: 'top' }, [a.spec()], { clock: new FakeClock(), onGiveUp: (m) => messages.push(m) });
  root.kill();
  await settle();
  assert.equal(messages, ['super-pi gave up: the root supervisor "top" exited (killed); not restarting it']);
});

test('a nested supervisor with a numeric shutdown that overruns it is killed, and kills its own children', async () => {
  const { journal, a, b } = abc();
  const clock = new FakeClock();
  const root = await Supervisor.start({ strategy: 'one_for_one' }, [Supervisor.childSpec('inner', { strategy: 'one_for_one' }, [a.spec(), b.spec({ shutdown: 'infinity' })], { clock }, { shutdown: 2000 })], { clock });
  b.ignoreStop = true;
  journal.length = 0;
  root.stop();
  await settle();
  assert.equal(journal, ['stop:b']);
  clock.advance(2000);
  await settle();
  assert.equal(journal, ['stop:b', 'kill:b', 'kill:a']);
  assert.equal(await root.exited, shutdown);
});

test('killing a parent kills the nested subtree at once', async () => {
  const { journal, a, b } = abc();
  const root = await Supervisor.start({ strategy: 'one_for_one' }, [a.spec(), Supervisor.childSpec('inner', { strategy: 'one_for_one' }, [b.spec()])], { clock: new FakeClock() });
  journal.length = 0;
  root.kill();
  assert.equal(await root.exited, killed);
  assert.equal(journal, ['kill:b', 'kill:a']);
});

test('a nested supervisor is named after its id and reports events under that name', async () => {
  const { a } = abc();
  const events: SupervisorEvent[] = [];
  await Supervisor.start({ strategy: 'one_for_one', name: 'root' }, [Supervisor.childSpec('pool', { strategy: 'one_for_one' }, [a.spec()], { onEvent: (e) => events.push(e) })]);
  assert.equal(events, [{ type: 'child-started', supervisor: 'pool', id: 'a' }]);
});

test.run();
