// The dynamic supervisor: children of one kind on demand, one_for_one restarts, the limit, shutdown.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../src/supervisor/clock.ts';
import { DynamicSupervisor } from '../../src/supervisor/dynamic-supervisor.ts';
import { RestartIntensityError, SupervisorError, type SupervisorErrorCode } from '../../src/supervisor/errors.ts';
import { crash, killed, normal, shutdown } from '../../src/supervisor/exit-reason.ts';
import { Supervisor } from '../../src/supervisor/supervisor.ts';
import { abc, FakeChild, settle } from './fake-child.ts';

async function codeOf(promise: Promise<unknown>): Promise<SupervisorErrorCode | 'resolved'> {
  return promise.then(
    () => 'resolved' as const,
    (e: unknown) => {
      if (e instanceof SupervisorError) return e.code;
      throw e;
    },
  );
}

test('startChild starts children on demand with the template kind and returns each handle', async () => {
  const { journal, a, b } = abc();
  const sup = await DynamicSupervisor.start({ name: 'sessions', child: { restart: 'transient' } }, { clock: new FakeClock() });
  const handle = await sup.startChild('s1', () => a.start());
  await sup.startChild('s2', () => b.start());
  assert.is(handle, a.current);
  assert.equal(journal, ['start:a', 'start:b']);
  assert.is(sup.count(), 2);
  assert.equal(sup.whichChildren(), [
    { id: 's1', state: 'running', restart: 'transient', type: 'worker' },
    { id: 's2', state: 'running', restart: 'transient', type: 'worker' },
  ]);
});

test('terminateChild stops the child by the template shutdown and forgets it', async () => {
  const { journal, a } = abc();
  const sup = await DynamicSupervisor.start({ child: { shutdown: 'brutal_kill' } }, { clock: new FakeClock() });
  await sup.startChild('s1', () => a.start());
  await sup.terminateChild('s1');
  assert.equal(journal, ['start:a', 'kill:a']);
  assert.is(sup.count(), 0);
  assert.is(await codeOf(sup.terminateChild('s1')), 'not_found');
});

test('an id in use is refused with already_started; a bad id with invalid_spec', async () => {
  const { a } = abc();
  const sup = await DynamicSupervisor.start({}, { clock: new FakeClock() });
  await sup.startChild('s1', () => a.start());
  assert.is(await codeOf(sup.startChild('s1', () => a.start())), 'already_started');
  assert.is(await codeOf(sup.startChild('', () => a.start())), 'invalid_spec');
});

test('maxChildren: a start past the limit is refused at once with a clear error; a freed slot can be reused', async () => {
  const sup = await DynamicSupervisor.start({ name: 'sessions', maxChildren: 2 }, { clock: new FakeClock() });
  await sup.startChild('s1', () => new FakeChild('1').start());
  await sup.startChild('s2', () => new FakeChild('2').start());
  const error = await sup.startChild('s3', () => new FakeChild('3').start()).catch((e: unknown) => e);
  assert.ok(error instanceof SupervisorError && error.code === 'max_children');
  assert.is(error instanceof Error && error.message, 'supervisor "sessions": cannot start child "s3": already at maxChildren (2); stop some children or raise maxChildren');
  await sup.terminateChild('s1');
  await sup.startChild('s3', () => new FakeChild('3').start());
  assert.is(sup.count(), 2);
});

test('maxChildren counts starts still queued, so a burst cannot overshoot it', async () => {
  const sup = await DynamicSupervisor.start({ maxChildren: 2 }, { clock: new FakeClock() });
  const results = await Promise.all(['s1', 's2', 's3'].map((id) => codeOf(sup.startChild(id, () => new FakeChild(id).start()))));
  assert.equal(results, ['resolved', 'resolved', 'max_children']);
  assert.is(sup.count(), 2);
});

test('a start that fails is refused with start_failed and not kept', async () => {
  const { a } = abc();
  const sup = await DynamicSupervisor.start({}, { clock: new FakeClock() });
  a.failNextStarts = 1;
  assert.is(await codeOf(sup.startChild('s1', () => a.start())), 'start_failed');
  assert.is(sup.count(), 0);
});

test('a permanent child that crashes is restarted under the same id; its siblings are untouched', async () => {
  const { journal, a, b } = abc();
  const sup = await DynamicSupervisor.start({}, { clock: new FakeClock() });
  await sup.startChild('s1', () => a.start());
  await sup.startChild('s2', () => b.start());
  journal.length = 0;
  a.exit(crash(new Error('x')));
  await settle();
  assert.equal(journal, ['start:a']);
  assert.equal(sup.whichChildren().map((w) => `${w.id}:${w.state}`), ['s1:running', 's2:running']);
});

test('restart types: temporary is removed on any exit; transient is removed on a normal exit and restarted after a kill', async () => {
  const temp = await DynamicSupervisor.start({ child: { restart: 'temporary' } }, { clock: new FakeClock() });
  const t = new FakeChild('t');
  await temp.startChild('t', () => t.start());
  t.exit(crash(new Error('x')));
  await settle();
  assert.equal([temp.count(), t.starts], [0, 1]);

  const trans = await DynamicSupervisor.start({ child: { restart: 'transient' } }, { clock: new FakeClock() });
  const n = new FakeChild('n');
  const k = new FakeChild('k');
  await trans.startChild('n', () => n.start());
  await trans.startChild('k', () => k.start());
  n.exit(normal);
  k.exit(killed);
  await settle();
  assert.equal(trans.whichChildren().map((w) => `${w.id}:${w.state}`), ['k:running']);
  assert.equal([n.starts, k.starts], [1, 2]);
});

test('restart intensity is shared by all children: past it the supervisor stops them all and exits with a RestartIntensityError', async () => {
  const { journal, a, b } = abc();
  const sup = await DynamicSupervisor.start({ name: 'tasks', maxRestarts: 2 }, { clock: new FakeClock() });
  await sup.startChild('ta', () => a.start());
  await sup.startChild('tb', () => b.start());
  a.exit(crash(new Error('1')));
  await settle();
  b.exit(crash(new Error('2')));
  await settle();
  journal.length = 0;
  a.exit(crash(new Error('3')));
  const reason = await sup.exited;
  assert.equal(journal, ['stop:b']);
  const cause = reason.kind === 'crash' ? reason.cause : undefined;
  assert.ok(cause instanceof RestartIntensityError);
  assert.is(cause instanceof RestartIntensityError && cause.message, 'supervisor "tasks" gave up: child "ta" crashed, and restarting it would make 3 restarts within 5000 ms, more than the 2 its restart intensity allows');
});

test('stop() stops all children at once (not one by one) and then exits shutdown', async () => {
  const { journal, a, b } = abc();
  const clock = new FakeClock();
  const sup = await DynamicSupervisor.start({ child: { shutdown: 1000 } }, { clock });
  await sup.startChild('s1', () => a.start());
  await sup.startChild('s2', () => b.start());
  a.ignoreStop = true;
  b.ignoreStop = true;
  journal.length = 0;
  sup.stop();
  await settle();
  assert.equal(journal, ['stop:a', 'stop:b']);
  clock.advance(1000);
  assert.equal(await sup.exited, shutdown);
  assert.equal(journal, ['stop:a', 'stop:b', 'kill:a', 'kill:b']);
  assert.is(await codeOf(sup.startChild('s3', () => a.start())), 'not_running');
});

test('kill() kills every child at once and exits killed', async () => {
  const { journal, a, b } = abc();
  const sup = await DynamicSupervisor.start({}, { clock: new FakeClock() });
  await sup.startChild('s1', () => a.start());
  await sup.startChild('s2', () => b.start());
  journal.length = 0;
  sup.kill();
  assert.equal(await sup.exited, killed);
  assert.equal(journal, ['kill:b', 'kill:a']);
});

test('as a child of a Supervisor: an escalation restarts it empty; stopping the parent stops its children', async () => {
  const { journal, a } = abc();
  const clock = new FakeClock();
  let current: DynamicSupervisor | undefined;
  const spec = {
    id: 'sessions',
    type: 'supervisor' as const,
    start: async () => (current = await DynamicSupervisor.start({ name: 'sessions', maxRestarts: 0 }, { clock })),
  };
  const root = await Supervisor.start({ strategy: 'one_for_one', name: 'root' }, [spec], { clock });
  const first = current;
  await first?.startChild('s1', () => a.start());
  a.exit(crash(new Error('x')));
  await settle();
  assert.ok(current && current !== first, 'a new dynamic supervisor was started');
  assert.is(current?.count(), 0);
  await current?.startChild('s2', () => a.start());
  journal.length = 0;
  root.stop();
  await root.exited;
  assert.equal(journal, ['stop:a']);
});

test('DynamicSupervisor.childSpec builds a supervisor-type spec named after its id', async () => {
  const spec = DynamicSupervisor.childSpec('tasks', { maxChildren: 5 });
  assert.equal([spec.id, spec.type], ['tasks', 'supervisor']);
  const dyn = await spec.start();
  assert.ok(dyn instanceof DynamicSupervisor && dyn.name === 'tasks' && dyn.maxChildren === 5);
  dyn.stop();
  assert.equal(await dyn.exited, shutdown);
});

test('invalid flags are refused with invalid_flags', async () => {
  assert.is(await codeOf(DynamicSupervisor.start({ maxChildren: -1 })), 'invalid_flags');
});

test.run();
