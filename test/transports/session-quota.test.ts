// Session caps by caller class: the global cap, one per token principal, one for all anonymous callers
// together — and with tokens configured, anonymous callers never take more than half of the global cap.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Principal } from '../../src/mcp/state.ts';
import { SessionQuota } from '../../src/transports/session-quota.ts';

const anonymous: Principal = { kind: 'anonymous' };
const alice: Principal = { kind: 'token', name: 'alice' };
const bob: Principal = { kind: 'token', name: 'bob' };

test('a token principal past --max-sessions-per-principal is 429; other principals are not affected', () => {
  const q = new SessionQuota({ maxSessions: 10, maxSessionsPerPrincipal: 2, maxAnonymousSessions: 5, tokensConfigured: true });
  assert.is(q.acquire(alice), null);
  assert.is(q.acquire(alice), null);
  const refused = q.acquire(alice);
  assert.is(refused?.status, 429);
  assert.match(refused?.message ?? '', /--max-sessions-per-principal/);
  assert.is(q.acquire(bob), null);
  q.release(alice);
  assert.is(q.acquire(alice), null, 'a released slot can be taken again');
  assert.is(q.total, 3);
});

test('with tokens configured, anonymous callers get at most half of --max-sessions, so token holders keep the rest', () => {
  const q = new SessionQuota({ maxSessions: 10, maxSessionsPerPrincipal: 100, maxAnonymousSessions: 1000, tokensConfigured: true });
  assert.is(q.anonymousCap, 5);
  for (let i = 0; i < 5; i++) assert.is(q.acquire(anonymous), null);
  const refused = q.acquire(anonymous);
  assert.is(refused?.status, 429);
  assert.match(refused?.message ?? '', /--max-anonymous-sessions/);
  for (let i = 0; i < 5; i++) assert.is(q.acquire(alice), null, 'token holders still get sessions');
  assert.is(q.acquire(bob)?.status, 503, 'the global cap is reached last');
});

test('without tokens everyone is anonymous: --max-anonymous-sessions alone caps them, under --max-sessions', () => {
  const q = new SessionQuota({ maxSessions: 3, maxSessionsPerPrincipal: 1, maxAnonymousSessions: 1000, tokensConfigured: false });
  for (let i = 0; i < 3; i++) assert.is(q.acquire(anonymous), null);
  const refused = q.acquire(anonymous);
  assert.is(refused?.status, 503);
  assert.match(refused?.message ?? '', /3 sessions are open, the limit \(--max-sessions\)/);
});

test('releasing every slot brings every count back to zero (no principal keeps an entry)', () => {
  const q = new SessionQuota({ maxSessions: 4, maxSessionsPerPrincipal: 1, maxAnonymousSessions: 1, tokensConfigured: true });
  for (const p of [anonymous, alice, bob]) assert.is(q.acquire(p), null);
  for (const p of [anonymous, alice, bob]) q.release(p);
  assert.is(q.total, 0);
  for (const p of [anonymous, alice, bob]) assert.is(q.acquire(p), null);
});

test.run();
