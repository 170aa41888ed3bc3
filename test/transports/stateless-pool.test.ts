// The sessions kept for 2026-07-28 requests: an idle one of the same principal is handed out, never a busy
// one, never one with the request's id in flight, never one that has ended, never another principal's;
// idle ones age out on one sweep timer, and a principal's idle ones are shed when its quota is full.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Principal } from '../../src/mcp/state.ts';
import { FakeClock } from '../../src/time/fake-clock.ts';
import { principalKey as poolKey } from '../../src/mcp/round-trip.ts';
import { type Poolable, StatelessPool } from '../../src/transports/stateless-pool.ts';
import { STATELESS_SESSION_IDLE_MS } from '../../src/limits.ts';

class Fake implements Poolable {
  busy = false;
  ended = false;
  readonly ids = new Set<string>();
  constructor(readonly id: string) {}
  inFlight(key: string): boolean {
    return this.ids.has(key);
  }
}

const alice: Principal = { kind: 'token', name: 'alice' };
const bob: Principal = { kind: 'token', name: 'bob' };

function pool(clock = new FakeClock()) {
  const closed: string[] = [];
  const p: StatelessPool<Fake> = new StatelessPool<Fake>(clock, (s) => {
    closed.push(s.id);
    s.ended = true;
  }, (s) => !s.ended);
  return { p, clock, closed };
}

const test = suite('stateless pool');

test('an idle session of the same principal is handed out again; another principal never gets it', () => {
  const { p } = pool();
  const a = new Fake('a');
  p.add(alice, a);
  assert.is(p.take(bob, '1'), null);
  assert.is(p.take(alice, '1'), a);
});

test('a busy session, one with the id in flight, or one that has ended is skipped', () => {
  const { p } = pool();
  const a = new Fake('a');
  const b = new Fake('b');
  const c = new Fake('c');
  p.add(alice, a);
  p.add(alice, b);
  p.add(alice, c);
  c.busy = true;
  b.ids.add('7');
  assert.is(p.take(alice, '7'), a);
  a.ended = true;
  assert.is(p.take(alice, '7'), null);
  assert.is(p.take(alice, '8'), b);
});

test('a removed session is forgotten', () => {
  const { p } = pool();
  const a = new Fake('a');
  p.add(alice, a);
  p.remove(alice, a);
  assert.is(p.size, 0);
  assert.is(p.take(alice, '1'), null);
});

test('sessions idle for STATELESS_SESSION_IDLE_MS are closed by one sweep timer; busy or recently used ones stay', () => {
  const { p, clock, closed } = pool();
  const a = new Fake('a');
  const b = new Fake('b');
  const c = new Fake('c');
  p.add(alice, a);
  p.add(alice, b);
  p.add(bob, c);
  assert.is(clock.pendingTimers, 1);
  b.busy = true;
  clock.advance(STATELESS_SESSION_IDLE_MS / 2);
  assert.is(p.take(bob, '1'), c);
  clock.advance(STATELESS_SESSION_IDLE_MS / 2);
  assert.equal(closed, ['a']);
  p.remove(alice, a);
  clock.advance(STATELESS_SESSION_IDLE_MS);
  assert.equal(closed, ['a', 'c']);
  p.stop();
  assert.is(clock.pendingTimers, 0);
});

test('shed closes the principal\'s idle sessions only, and says how many', () => {
  const { p, closed } = pool();
  const a = new Fake('a');
  const b = new Fake('b');
  const c = new Fake('c');
  p.add(alice, a);
  p.add(alice, b);
  p.add(bob, c);
  b.busy = true;
  assert.is(p.shed(alice), 1);
  assert.equal(closed, ['a']);
});

test('principals are kept apart by kind and token name', () => {
  assert.is.not(poolKey(alice), poolKey(bob));
  assert.is.not(poolKey({ kind: 'local' }), poolKey({ kind: 'anonymous' }));
  assert.is.not(poolKey({ kind: 'token', name: 'anonymous' }), poolKey({ kind: 'anonymous' }));
});

test.run();
