// A principal's requests in flight on the node, across its sessions (MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL):
// the book alone under random acquire/settle/close, then real Sessions (on recording actors) under random
// requests, answers, cancels, crashes with redelivery and closes — the count is never negative, never past
// the limit, always what the sessions hold, and nothing is left (no entry) once they end. The same for the
// characters of its messages not yet handled (MAX_INPUT_CHARS_PER_PRINCIPAL): refused exactly past the bound.

import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ConnectionOutput } from '../../src/connection/connection-actor.ts';
import { PrincipalRequests, type RequestAccount } from '../../src/connection/principal-requests.ts';
import { type StubActor, stubSession } from './stub-session.ts';

const book = suite('PrincipalRequests');
const sessions = suite('sessions sharing a principal count');

book('acquires up to the limit for one principal; another principal is not affected; a settle gives places back', () => {
  const requests = new PrincipalRequests(2);
  const a1 = requests.account('token:a');
  const a2 = requests.account('token:a');
  const b = requests.account('token:b');
  assert.ok(a1.acquire());
  assert.ok(a2.acquire());
  assert.not.ok(a1.acquire(), 'a third request of a, on either session, is refused');
  assert.not.ok(a2.acquire());
  assert.is(requests.heldBy('token:a'), 2, 'a refusal takes nothing');
  assert.ok(b.acquire(), 'b has its own count');
  a1.settle(0);
  assert.ok(a2.acquire(), 'a place given back is taken again');
  a2.settle(0);
  b.settle(0);
  assert.is(requests.principals, 0, 'no entry is left at zero');
});

book('under random acquire, release and close of accounts the count is the sum of the accounts, never negative or past the limit, and empty at the end', () => {
  const op = fc.oneof(
    fc.record({ k: fc.constant('acquire' as const), at: fc.nat(5) }),
    fc.record({ k: fc.constant('release' as const), at: fc.nat(5), n: fc.nat(3) }),
    fc.record({ k: fc.constant('close' as const), at: fc.nat(5) }),
  );
  fc.assert(fc.property(fc.integer({ min: 1, max: 6 }), fc.array(op, { maxLength: 200 }), (limit, ops) => {
    const requests = new PrincipalRequests(limit);
    const keys = ['token:a', 'token:b', 'anonymous'];
    const accounts: { key: string; account: RequestAccount }[] = [];
    for (let i = 0; i < 6; i++) {
      const key = keys[i % keys.length] as string;
      accounts.push({ key, account: requests.account(key) });
    }
    for (const o of ops) {
      const { key, account } = accounts[o.at] as { key: string; account: RequestAccount };
      if (o.k === 'acquire') {
        const before = requests.heldBy(key);
        const taken = account.acquire();
        assert.is(taken, before < limit, 'refused exactly at the limit');
      } else if (o.k === 'release') account.settle(Math.max(0, account.held - o.n));
      else account.settle(0);
      for (const k of keys) {
        const sum = accounts.filter((a) => a.key === k).reduce((s, a) => s + a.account.held, 0);
        assert.is(requests.heldBy(k), sum);
        assert.ok(sum >= 0 && sum <= limit);
      }
    }
    for (const { account } of accounts) account.settle(0);
    assert.is(requests.principals, 0);
  }));
});

const LIMIT = 4;
/** A few calls' worth of characters (a call's line is about 100), so that the flood of a property passes it. */
const INPUT_LIMIT = 350;

/** A session on recording actors: it counts what each actor was sent, so an answer reports all of it handled. */
function hosted(requests: PrincipalRequests, key: string, id: string) {
  const { session, actors, answered } = stubSession({ id, checkpoint: true, requests: requests.account(key) });
  return { session, actors, answered, key, open: true, sent: [] as string[] };
}
type Hosted = ReturnType<typeof hosted>;

const call = (id: string, tool: string) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: tool === 'bash' ? { command: 'true' } : { path: 'a' } } });
const cancel = (id: string) => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } });

sessions('requests, answers, cancels, crashes (redelivered or answered) and closes: the count and the unhandled characters are what the open sessions hold, and nothing at the end', async () => {
  const op = fc.oneof(
    { arbitrary: fc.record({ k: fc.constant('request' as const), at: fc.nat(2), retryable: fc.boolean() }), weight: 4 },
    fc.record({ k: fc.constant('answer' as const), at: fc.nat(2), pick: fc.nat() }),
    fc.record({ k: fc.constant('cancel' as const), at: fc.nat(2), pick: fc.nat() }),
    fc.record({ k: fc.constant('crash' as const), at: fc.nat(2) }),
    fc.record({ k: fc.constant('close' as const), at: fc.nat(2) }),
  );
  await fc.assert(fc.asyncProperty(fc.array(op, { maxLength: 80 }), async (ops) => {
    const requests = new PrincipalRequests(LIMIT, INPUT_LIMIT);
    const all: Hosted[] = [hosted(requests, 'token:a', 's1'), hosted(requests, 'token:a', 's2'), hosted(requests, 'token:b', 's3')];
    for (const h of all) await h.session.start();
    let next = 0;
    for (const o of ops) {
      const h = all[o.at] as Hosted;
      const actor = h.actors.at(-1) as StubActor;
      const unanswered = h.sent.filter((id) => !h.answered.has(id));
      if (o.k === 'request') {
        const id = `r${next++}`;
        const before = requests.heldBy(h.key);
        const input = requests.inputOf(h.key);
        const text = call(id, o.retryable ? 'read' : 'bash');
        h.sent.push(id);
        h.session.receiveFrame({ kind: 'line', text });
        const refused = h.answered.get(id)?.line.includes('MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL') === true;
        if (h.open) assert.is(refused, before >= LIMIT, 'refused exactly when the principal holds the limit');
        const inputRefused = h.answered.get(id)?.line.includes('MAX_INPUT_CHARS_PER_PRINCIPAL') === true;
        if (h.open && !refused) assert.is(inputRefused, input > 0 && input + text.length > INPUT_LIMIT, 'refused exactly past the input bound');
      } else if (o.k === 'answer' && unanswered.length > 0 && actor.ref.alive) {
        const id = unanswered[o.pick % unanswered.length] as string;
        const reply: ConnectionOutput = { replies: [{ line: JSON.stringify({ jsonrpc: '2.0', id, result: {} }), inReplyTo: id }], effects: [], handled: actor.casts.length };
        actor.ref.deliver(reply);
      } else if (o.k === 'cancel' && unanswered.length > 0) {
        const id = unanswered[o.pick % unanswered.length] as string;
        h.session.receiveFrame({ kind: 'line', text: cancel(id) });
        h.answered.set(id, { line: 'cancelled' });
      } else if (o.k === 'crash' && h.open && actor.ref.alive) {
        actor.ref.settle({ kind: 'crash', cause: { name: 'Error', message: 'boom' } });
        await Promise.resolve();
        await h.session.start();
      } else if (o.k === 'close' && h.open) {
        h.open = false;
        await h.session.close();
      }
      for (const key of ['token:a', 'token:b']) {
        const held = all.filter((s) => s.key === key && s.open).reduce((n, s) => n + s.session.inFlight, 0);
        assert.is(requests.heldBy(key), held, `${key}'s count is what its open sessions hold`);
        assert.ok(held >= 0 && held <= LIMIT);
        const pending = all.filter((s) => s.key === key && s.open).reduce((n, s) => n + s.session.pendingInput, 0);
        assert.is(requests.inputOf(key), pending, `${key}'s unhandled characters are what its open sessions hold`);
      }
    }
    for (const h of all) await h.session.close();
    assert.is(requests.principals, 0, 'no entry once every session ended');
  }), { numRuns: 150 });
});

sessions('a ping is never refused for the principal\'s count: the core answers it whatever is in flight (a flood of held requests left a client\'s liveness ping answered -32011)', async () => {
  const requests = new PrincipalRequests(2);
  const h = hosted(requests, 'token:a', 's1');
  await h.session.start();
  h.session.receiveFrame({ kind: 'line', text: call('c1', 'bash') });
  h.session.receiveFrame({ kind: 'line', text: call('c2', 'bash') });
  assert.is(requests.heldBy('token:a'), 2);
  h.session.receiveFrame({ kind: 'line', text: JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'ping' }) });
  assert.is(h.answered.get('p'), undefined, 'the ping goes on to the core, not refused');
  h.session.receiveFrame({ kind: 'line', text: call('c3', 'bash') });
  assert.match(h.answered.get('c3')?.line ?? '', 'MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL', 'another request is refused');
  await h.session.close();
  assert.is(requests.principals, 0);
});

book.run();
sessions.run();
