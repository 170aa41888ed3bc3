import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { validateDynamicSupervisorFlags, validateSupervisorFlags } from '../../src/supervisor/supervisor-flags.ts';

function errorOf(result: { ok: true } | { ok: false; error: string }): string {
  if (result.ok) throw new Error('expected the flags to be refused');
  return result.error;
}

test('supervisor flags: defaults are 3 restarts in 5000 ms, name "supervisor"', () => {
  assert.equal(validateSupervisorFlags({ strategy: 'one_for_all' }), {
    ok: true,
    flags: { strategy: 'one_for_all', maxRestarts: 3, periodMs: 5000, name: 'supervisor' },
  });
});

test('supervisor flags: each bad field is named', () => {
  assert.is(errorOf(validateSupervisorFlags({ strategy: 'simple_one_for_one', name: 'app' })), 'supervisor "app" flags: strategy must be one of one_for_one, one_for_all, rest_for_one, got "simple_one_for_one"');
  assert.is(errorOf(validateSupervisorFlags({ strategy: 'one_for_one', maxRestarts: -1 })), 'supervisor "supervisor" flags: maxRestarts must be a non-negative integer, got -1');
  assert.is(errorOf(validateSupervisorFlags({ strategy: 'one_for_one', periodMs: 0 })), 'supervisor "supervisor" flags: periodMs must be a positive integer of milliseconds, got 0');
  assert.is(errorOf(validateSupervisorFlags({ strategy: 'one_for_one', name: '' })), 'supervisor flags: name must be a non-empty string, got ""');
  assert.is(errorOf(validateSupervisorFlags({ strategy: 'one_for_one', intensity: 1 })), 'supervisor "supervisor" flags: unknown field "intensity" (known fields: strategy, maxRestarts, periodMs, name)');
  assert.is(errorOf(validateSupervisorFlags('one_for_one')), 'supervisor flags must be an object, got "one_for_one"');
});

test('maxRestarts 0 is allowed (every restart escalates)', () => {
  assert.ok(validateSupervisorFlags({ strategy: 'one_for_one', maxRestarts: 0 }).ok);
});

test('dynamic supervisor flags: defaults and the child template', () => {
  assert.equal(validateDynamicSupervisorFlags({}), {
    ok: true,
    flags: { name: 'dynamic supervisor', maxRestarts: 3, periodMs: 5000, maxChildren: 100_000, child: {} },
  });
  const r = validateDynamicSupervisorFlags({ name: 'sessions', maxChildren: 2, child: { restart: 'transient', shutdown: 'brutal_kill' } });
  assert.equal(r.ok && r.flags.child, { restart: 'transient', shutdown: 'brutal_kill' });
});

test('dynamic supervisor flags: bad maxChildren and bad template fields are named', () => {
  assert.is(errorOf(validateDynamicSupervisorFlags({ name: 's', maxChildren: 0 })), 'dynamic supervisor "s" flags: maxChildren must be a positive integer, got 0');
  assert.is(errorOf(validateDynamicSupervisorFlags({ name: 's', child: { restart: 'always' } })), 'dynamic supervisor "s" flags: child.restart must be one of permanent, transient, temporary, got "always"');
  assert.is(errorOf(validateDynamicSupervisorFlags({ name: 's', child: { shutdown: -5 } })), 'dynamic supervisor "s" flags: child.shutdown must be a non-negative integer of milliseconds, "brutal_kill" or "infinity", got -5');
  assert.is(errorOf(validateDynamicSupervisorFlags({ name: 's', child: { type: 'thread' } })), 'dynamic supervisor "s" flags: child.type must be one of worker, supervisor, got "thread"');
  assert.is(errorOf(validateDynamicSupervisorFlags({ name: 's', child: { id: 'x' } })), 'dynamic supervisor "s" flags: unknown field child.id (known: restart, shutdown, type)');
});

test.run();
