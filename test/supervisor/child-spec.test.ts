import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolveChildSpec, validateChildSpec } from '../../src/supervisor/child-spec.ts';
import { FakeChild } from './fake-child.ts';

const start = () => new FakeChild('x').start();

function errorOf(spec: unknown): string {
  const result = validateChildSpec(spec);
  if (result.ok) throw new Error('expected the spec to be refused');
  return result.error;
}

test('defaults: permanent worker with a 5000 ms shutdown', () => {
  const spec = resolveChildSpec({ id: 'db', start });
  assert.equal({ restart: spec.restart, shutdown: spec.shutdown, type: spec.type }, { restart: 'permanent', shutdown: 5000, type: 'worker' });
});

test('defaults: a supervisor child waits for its subtree (shutdown infinity)', () => {
  assert.is(resolveChildSpec({ id: 'sub', start, type: 'supervisor' }).shutdown, 'infinity');
});

test('explicit fields win over the defaults', () => {
  const spec = resolveChildSpec({ id: 'sub', start, type: 'supervisor', restart: 'temporary', shutdown: 'brutal_kill' });
  assert.equal([spec.restart, spec.shutdown, spec.type], ['temporary', 'brutal_kill', 'supervisor']);
});

test('a valid spec is resolved with its defaults and keeps its start function', () => {
  const result = validateChildSpec({ id: 'db', start, shutdown: 0 });
  assert.ok(result.ok);
  if (result.ok) {
    assert.is(result.spec.start, start);
    assert.equal([result.spec.restart, result.spec.shutdown, result.spec.type], ['permanent', 0, 'worker']);
  }
});

test('refuses a spec that is not an object', () => {
  assert.is(errorOf(null), 'child spec must be an object, got null');
  assert.is(errorOf(['db']), 'child spec must be an object, got ["db"]');
});

test('refuses a missing or empty id', () => {
  assert.is(errorOf({ start }), 'child spec: id must be a non-empty string, got undefined');
  assert.is(errorOf({ id: '', start }), 'child spec: id must be a non-empty string, got ""');
  assert.is(errorOf({ id: 42, start }), 'child spec: id must be a non-empty string, got 42');
});

test('refuses a start that is not a function', () => {
  assert.is(errorOf({ id: 'db' }), 'child spec "db": start must be a function returning a ChildHandle, got undefined');
  assert.is(errorOf({ id: 'db', start: 'node db.js' }), 'child spec "db": start must be a function returning a ChildHandle, got "node db.js"');
});

test('refuses an unknown restart type', () => {
  assert.is(errorOf({ id: 'db', start, restart: 'always' }), 'child spec "db": restart must be one of permanent, transient, temporary, got "always"');
});

test('refuses a bad shutdown: negative, fractional, or an unknown word', () => {
  const expected = (got: string) => `child spec "db": shutdown must be a non-negative integer of milliseconds, "brutal_kill" or "infinity", got ${got}`;
  assert.is(errorOf({ id: 'db', start, shutdown: -1 }), expected('-1'));
  assert.is(errorOf({ id: 'db', start, shutdown: 1.5 }), expected('1.5'));
  assert.is(errorOf({ id: 'db', start, shutdown: 'never' }), expected('"never"'));
});

test('refuses an unknown child type', () => {
  assert.is(errorOf({ id: 'db', start, type: 'process' }), 'child spec "db": type must be one of worker, supervisor, got "process"');
});

test('refuses an unknown field, so a typo cannot silently mean the default', () => {
  assert.is(errorOf({ id: 'db', start, restrat: 'temporary' }), 'child spec "db": unknown field "restrat" (known fields: id, start, restart, shutdown, type)');
});

test('reports the first bad field only (restart before shutdown)', () => {
  assert.match(errorOf({ id: 'db', start, restart: 'x', shutdown: -1 }), /restart must be/);
});

test.run();
