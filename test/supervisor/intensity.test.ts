// Restart intensity inside a running supervisor: the window, escalation, and what is left after it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../src/supervisor/clock.ts';
import { RestartIntensityError } from '../../src/supervisor/errors.ts';
import { crash, describeExit, type ExitReason, killed } from '../../src/supervisor/exit-reason.ts';
import type { SupervisorEvent } from '../../src/supervisor/supervisor-events.ts';
import { Supervisor } from '../../src/supervisor/supervisor.ts';
import { abc, settle } from './fake-child.ts';

async function crashAt(clock: FakeClock, at: number, exit: () => void): Promise<void> {
  clock.advance(at - clock.now());
  exit();
  await settle();
}

/** The RestartIntensityError inside a supervisor's crash exit. */
function intensityError(reason: ExitReason): RestartIntensityError {
  const cause = reason.kind === 'crash' ? reason.cause : undefined;
  if (!(cause instanceof RestartIntensityError)) throw new Error(`expected a RestartIntensityError, got ${describeExit(reason)}`);
  return cause;
}

test('3 restarts inside the period are allowed; the 4th stops the children (reverse order) and escalates', async () => {
  const { journal, a, b, c } = abc();
  const clock = new FakeClock();
  const events: SupervisorEvent[] = [];
  const sup = await Supervisor.start({ strategy: 'one_for_one', name: 'sup' }, [a.spec(), b.spec(), c.spec()], { clock, onEvent: (e) => events.push(e) });
  for (const [i, at] of [0, 1000, 2000].entries()) {
    await crashAt(clock, at, () => b.exit(crash(new Error(`boom ${i + 1}`))));
    assert.is(b.starts, i + 2, `restart ${i + 1} allowed`);
  }
  journal.length = 0;
  await crashAt(clock, 3000, () => b.exit(crash(new Error('boom 4'))));
  assert.equal(journal, ['stop:c', 'stop:a']);
  assert.is(b.starts, 4);
  const reason = await sup.exited;
  const error = intensityError(reason);
  assert.is(error.message, 'supervisor "sup" gave up: child "b" crashed, and restarting it would make 4 restarts within 5000 ms, more than the 3 its restart intensity allows');
  assert.equal({ ...error.details, lastExit: describeExit(error.details.lastExit) }, { supervisor: 'sup', childId: 'b', restarts: 3, maxRestarts: 3, periodMs: 5000, lastExit: 'crash: Error: boom 4' });
  assert.match(describeExit(reason), /\(caused by: Error: boom 4\)$/);
  assert.equal(
    events.find((e) => e.type === 'intensity-exceeded'),
    { type: 'intensity-exceeded', supervisor: 'sup', id: 'b', restarts: 3, maxRestarts: 3, periodMs: 5000, reason: error.details.lastExit },
  );
});

test('after the intensity is exceeded the offender is failed and its siblings stopped', async () => {
  const { a, b, c } = abc();
  const clock = new FakeClock();
  const sup = await Supervisor.start({ strategy: 'one_for_one', maxRestarts: 1 }, [a.spec(), b.spec(), c.spec()], { clock });
  await crashAt(clock, 0, () => b.exit(killed));
  await crashAt(clock, 10, () => b.exit(killed));
  await sup.exited;
  assert.equal(sup.whichChildren().map((w) => `${w.id}:${w.state}`), ['a:stopped', 'b:failed', 'c:stopped']);
  assert.match(intensityError(await sup.exited).message, /child "b" was killed, and restarting it would make 2 restarts within 5000 ms, more than the 1/);
});

test('restarts spread beyond the period never escalate', async () => {
  const { a, b, c } = abc();
  const clock = new FakeClock();
  const sup = await Supervisor.start({ strategy: 'one_for_one' }, [a.spec(), b.spec(), c.spec()], { clock });
  for (let i = 0; i < 10; i++) await crashAt(clock, i * 2000, () => b.exit(crash(new Error('again'))));
  assert.is(b.starts, 11);
  assert.equal(sup.whichChildren().map((w) => w.state), ['running', 'running', 'running']);
});

test('a restart exactly one period after the oldest one is allowed', async () => {
  const { a, b, c } = abc();
  const clock = new FakeClock();
  const sup = await Supervisor.start({ strategy: 'one_for_one' }, [a.spec(), b.spec(), c.spec()], { clock });
  for (const at of [0, 1, 2, 5000]) await crashAt(clock, at, () => b.exit(crash(new Error('x'))));
  assert.is(b.starts, 5);
  assert.is(sup.whichChildren()[1]?.state, 'running');
});

test('the window is shared by all children: the 4th restart of any child escalates', async () => {
  const { a, b, c } = abc();
  const clock = new FakeClock();
  const sup = await Supervisor.start({ strategy: 'one_for_one' }, [a.spec(), b.spec(), c.spec()], { clock });
  for (const child of [a, b, c]) await crashAt(clock, clock.now() + 1, () => child.exit(crash(new Error('x'))));
  await crashAt(clock, clock.now() + 1, () => a.exit(crash(new Error('x'))));
  assert.is((await sup.exited).kind, 'crash');
  assert.equal(sup.whichChildren().map((w) => w.state), ['failed', 'stopped', 'stopped']);
});

test('a one_for_all restart of three children counts as one restart', async () => {
  const { a, b, c } = abc();
  const clock = new FakeClock();
  const sup = await Supervisor.start({ strategy: 'one_for_all' }, [a.spec(), b.spec(), c.spec()], { clock });
  for (let i = 0; i < 3; i++) await crashAt(clock, i, () => b.exit(crash(new Error('x'))));
  assert.equal([a.starts, b.starts, c.starts], [4, 4, 4]);
  assert.equal(sup.whichChildren().map((w) => w.state), ['running', 'running', 'running']);
});

test('maxRestarts 0: the first restart escalates', async () => {
  const { a } = abc();
  const sup = await Supervisor.start({ strategy: 'one_for_one', maxRestarts: 0 }, [a.spec()], { clock: new FakeClock() });
  a.exit(crash(new Error('x')));
  await settle();
  assert.is(a.starts, 1);
  assert.is((await sup.exited).kind, 'crash');
});

test('a child whose restart keeps failing is retried through the intensity and ends in a give-up', async () => {
  const { journal, a, b } = abc();
  const events: SupervisorEvent[] = [];
  const sup = await Supervisor.start({ strategy: 'one_for_one' }, [a.spec(), b.spec()], { clock: new FakeClock(), onEvent: (e) => events.push(e) });
  journal.length = 0;
  b.failNextStarts = 100;
  b.exit(crash(new Error('first')));
  await settle();
  // One restart from the crash, two retries after failed starts, and the 4th attempt is refused.
  assert.equal(journal, ['start:b', 'start:b', 'start:b', 'stop:a']);
  assert.is(events.filter((e) => e.type === 'child-start-failed').length, 3);
  const error = intensityError(await sup.exited);
  assert.match(error.message, /child "b" crashed, and restarting it would make 4 restarts/);
  assert.is(describeExit(error.details.lastExit), 'crash: Error: start failed: b');
});

test('a restart that fails once is retried and the child runs again', async () => {
  const { a, b } = abc();
  const sup = await Supervisor.start({ strategy: 'one_for_one' }, [a.spec(), b.spec()], { clock: new FakeClock() });
  b.failNextStarts = 1;
  b.exit(crash(new Error('x')));
  await settle();
  assert.is(b.incarnations.length, 2);
  assert.is(sup.whichChildren()[1]?.state, 'running');
});

test.run();
