// The one session registry: another principal's session is not found; removing a session is the one way
// it ends, and removing it again does nothing (its teardown runs once, its quota slot comes back once);
// the quota counts what the registry holds.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Session } from '../../src/connection/session.ts';
import type { Principal } from '../../src/mcp/state.ts';
import { SessionRegistry } from '../../src/server/session-registry.ts';
import { FakeClock } from '../../src/supervisor/clock.ts';
import { isRefusal, type SessionSlot } from '../../src/transports/session-host.ts';

const LIMITS = { maxSessions: 4, maxSessionsPerPrincipal: 1, maxAnonymousSessions: 2, tokensConfigured: true };
const alice: Principal = { kind: 'token', name: 'alice' };
const bob: Principal = { kind: 'token', name: 'bob' };

// The registry only reads a session's requests in flight and waits for it to be idle.
const idleSession = { inFlight: 0, idle: () => Promise.resolve() } as unknown as Session;

function slotFor(registry: SessionRegistry, principal: Principal): SessionSlot {
  const slot = registry.reserve(principal);
  if (isRefusal(slot)) throw new Error(`refused: ${slot.message}`);
  return slot;
}

test('a session is found by its id for its own principal only', () => {
  const registry = new SessionRegistry(LIMITS, new FakeClock());
  const s = registry.add({ principal: alice, transport: 'http', session: idleSession, slot: slotFor(registry, alice), teardown: async () => undefined });
  assert.is(registry.find(s.id, alice), s);
  assert.is(registry.find(s.id, bob), undefined);
  assert.is(registry.find(s.id, { kind: 'anonymous' }), undefined);
  assert.is(registry.find('no-such-id', alice), undefined);
});

test('removing a session twice ends it once: one teardown, one slot given back', async () => {
  const registry = new SessionRegistry(LIMITS, new FakeClock());
  let teardowns = 0;
  const s = registry.add({ principal: alice, transport: 'websocket', session: idleSession, slot: slotFor(registry, alice), teardown: async () => { teardowns++; } });
  // alice holds her one session: a second is refused while it is open.
  const second = registry.reserve(alice);
  assert.ok(isRefusal(second) && second.status === 429);
  await Promise.all([registry.remove(s.id), registry.remove(s.id)]);
  await registry.remove(s.id);
  assert.is(teardowns, 1);
  assert.is(registry.size, 0);
  assert.is(registry.find(s.id, alice), undefined);
  // Her slot came back once: she may open one session again, and only one.
  const again = slotFor(registry, alice);
  assert.ok(isRefusal(registry.reserve(alice)), 'the slot was given back once, not twice');
  again.release();
  again.release();
  slotFor(registry, alice);
  assert.ok(isRefusal(registry.reserve(alice)), 'releasing a slot twice gave back one slot');
});

test('the registry counts the sessions of each transport', () => {
  const registry = new SessionRegistry(LIMITS, new FakeClock());
  registry.add({ principal: alice, transport: 'http', session: idleSession, slot: slotFor(registry, alice), teardown: async () => undefined });
  registry.add({ principal: bob, transport: 'websocket', session: idleSession, slot: slotFor(registry, bob), teardown: async () => undefined });
  registry.add({ principal: { kind: 'local' }, transport: 'stdio', session: idleSession, slot: slotFor(registry, { kind: 'local' }), teardown: async () => undefined });
  assert.equal([...registry.countByTransport()], [['http', 1], ['websocket', 1], ['stdio', 1]]);
  assert.is(registry.size, 3);
});

test.run();
