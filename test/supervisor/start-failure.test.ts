// A supervisor whose children cannot all start does not start: it undoes what it started.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ChildHandle } from '../../src/supervisor/child-spec.ts';
import { FakeClock } from '../../src/supervisor/clock.ts';
import { SupervisorError } from '../../src/supervisor/errors.ts';
import type { SupervisorEvent } from '../../src/supervisor/supervisor-events.ts';
import { Supervisor } from '../../src/supervisor/supervisor.ts';
import { abc, FakeChild } from './fake-child.ts';

async function refusal(promise: Promise<unknown>): Promise<SupervisorError> {
  const outcome = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(outcome instanceof SupervisorError)) throw new Error(`expected a SupervisorError, got ${String(outcome)}`);
  return outcome;
}

test('a child that fails to start: those started are stopped in reverse, later ones never start, start rejects', async () => {
  const { journal, a, b, c } = abc();
  const d = new FakeChild('d', journal);
  c.failNextStarts = 1;
  const events: SupervisorEvent[] = [];
  const error = await refusal(Supervisor.start({ strategy: 'one_for_one', name: 'app' }, [a.spec(), b.spec(), c.spec(), d.spec()], { clock: new FakeClock(), onEvent: (e) => events.push(e) }));
  assert.is(error.code, 'start_failed');
  assert.is(error.message, 'supervisor "app": child "c" failed to start: Error: start failed: c');
  assert.is((error.cause instanceof Error && error.cause.message), 'start failed: c');
  assert.equal(journal, ['start:a', 'start:b', 'start:c', 'stop:b', 'stop:a']);
  assert.is(d.starts, 0);
  assert.equal(events.at(-1)?.type, 'supervisor-exited');
});

test('a start that rejects later counts as a failed start', async () => {
  const { journal, a } = abc();
  const late = { id: 'late', start: () => new Promise<ChildHandle>((_, reject) => setImmediate(() => reject(new Error('no database')))) };
  const error = await refusal(Supervisor.start({ strategy: 'one_for_all', name: 'app' }, [a.spec(), late], { clock: new FakeClock() }));
  assert.is(error.message, 'supervisor "app": child "late" failed to start: Error: no database');
  assert.equal(journal, ['start:a', 'stop:a']);
});

test('a start that returns something other than a ChildHandle is a failed start', async () => {
  const error = await refusal(Supervisor.start({ strategy: 'one_for_one', name: 'app' }, [{ id: 'odd', start: () => Promise.resolve({ pid: 7 } as unknown as ChildHandle) }], { clock: new FakeClock() }));
  assert.is(error.message, 'supervisor "app": child "odd" failed to start: TypeError: child "odd": start must return a ChildHandle (exited, stop, kill), got {"pid":7}');
});

test('invalid specs, duplicate ids and invalid flags are refused before anything starts', async () => {
  const { journal, a } = abc();
  const bad = await refusal(Supervisor.start({ strategy: 'one_for_one', name: 'app' }, [a.spec(), { id: 'x', start: a.spec().start, restart: 'always' as 'permanent' }]));
  assert.is(bad.code, 'invalid_spec');
  assert.is(bad.message, 'supervisor "app": children[1]: child spec "x": restart must be one of permanent, transient, temporary, got "always"');
  const dup = await refusal(Supervisor.start({ strategy: 'one_for_one', name: 'app' }, [a.spec(), a.spec()]));
  assert.is(dup.code, 'duplicate_id');
  assert.is(dup.message, 'supervisor "app": children[1]: child id "a" is used twice');
  const flags = await refusal(Supervisor.start({ strategy: 'one_for_none' as 'one_for_one' }, [a.spec()]));
  assert.is(flags.code, 'invalid_flags');
  assert.equal(journal, []);
});

test('a supervisor with no children starts and stops', async () => {
  const sup = await Supervisor.start({ strategy: 'one_for_one' }, [], { clock: new FakeClock() });
  assert.equal(sup.countChildren(), { specs: 0, active: 0, supervisors: 0, workers: 0 });
  sup.stop();
  assert.equal((await sup.exited).kind, 'shutdown');
});

test.run();
