// Routing of one HTTP session's replies: a reply goes to the POST that carried the request it answers and
// to no other, whatever the interleaving of POSTs, replies and disconnections (fast-check, fixed seed);
// progress and questions go to the POST of the request they belong to. Routing reads only what the core
// says a message answers or belongs to, never its text.

import type { ReplyTarget } from '../../src/transports/web-reply.ts';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { idKey } from '../../src/mcp/jsonrpc.ts';
import { answer as answerTo, notice } from '../../src/mcp/outgoing.ts';
import type { HostedSession } from '../../src/transports/session-host.ts';
import { Exchange, HttpSession } from '../../src/transports/http-session.ts';
import { ABANDONED_IDS_KEPT } from '../../src/limits.ts';

const SEED = 20261203;

/** Just enough of a ServerResponse to see what a POST was answered. */
class FakeResponse {
  body = '';
  ended = false;
  destroyed = false;
  writeHead() {
    return this;
  }
  flushHeaders() {}
  write(chunk: string) {
    this.body += chunk;
    return true;
  }
  end(chunk?: string) {
    if (chunk) this.body += chunk;
    this.ended = true;
    return this;
  }
  on() {
    return this;
  }
}

// The session's core is not involved in routing: HttpSession never calls it.
const noCore = {} as HostedSession;

type Op = { kind: 'post'; ids: number[] } | { kind: 'reply'; pick: number } | { kind: 'hangUp'; post: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('post' as const), ids: fc.uniqueArray(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 3 }) }),
  fc.record({ kind: fc.constant('reply' as const), pick: fc.nat({ max: 20 }) }),
  fc.record({ kind: fc.constant('hangUp' as const), post: fc.nat({ max: 20 }) }),
);

/**
 * Runs `ops` against one session. Each request the session accepts is a distinct piece of work (a
 * serial); the core answers accepted requests in any order, each reply naming its id and, in its
 * result, the work it answers. Checks that every POST that finished got exactly its own work's answers,
 * and that every POST still connected finishes once all work is answered.
 */
function check(ops: Op[], refuseReusedIds: boolean): void {
  const s = new HttpSession('s', noCore, '2025-06-18');
  const posts: { serials: Set<number>; res: FakeResponse; ex: Exchange }[] = [];
  const work: { id: number; serial: number }[] = [];
  let serial = 0;
  const answer = (i: number) => {
    const [w] = work.splice(i, 1);
    if (w) s.route(answerTo(w.id, { serial: w.serial }));
  };
  for (const o of ops) {
    if (o.kind === 'post') {
      // http.ts answers a POST reusing an id in flight itself; only the others reach the session.
      if (refuseReusedIds && o.ids.some((id) => s.inFlight(idKey(id)))) continue;
      const res = new FakeResponse();
      const ex = new Exchange(res as unknown as ReplyTarget, new Set(o.ids.map(idKey)), 'json', true, s.replyHeaders, s.ids);
      s.addExchange(ex);
      const serials = new Set<number>();
      for (const id of o.ids) {
        serials.add(serial);
        work.push({ id, serial: serial++ });
      }
      posts.push({ serials, res, ex });
    } else if (o.kind === 'reply') {
      if (work.length > 0) answer(o.pick % work.length);
    } else {
      const p = posts[o.post % Math.max(1, posts.length)];
      if (p && !p.ex.finished) {
        p.ex.abandon();
        s.removeExchange(p.ex);
      }
    }
  }
  while (work.length > 0) answer(0);
  for (const p of posts) {
    if (!p.res.ended) {
      assert.ok(p.ex.finished, 'a POST still connected has every answer once all work is answered');
      continue;
    }
    const answers = JSON.parse(p.res.body) as { result: { serial: number } }[];
    assert.equal(answers.map((a) => a.result.serial).sort(), [...p.serials].sort(), 'a POST holds exactly the answers to its own requests');
  }
}

test('a reply reaches only the POST that carried the request it answers (POSTs reusing an id in flight refused, as http.ts does)', () => {
  fc.assert(fc.property(fc.array(op, { maxLength: 40 }), (ops) => check(ops, true)), { seed: SEED, numRuns: 500 });
});

test('without that refusal, answers cross or a POST waits forever (the bug of issue 10 item 13)', () => {
  assert.throws(() => fc.assert(fc.property(fc.array(op, { maxLength: 40 }), (ops) => check(ops, false)), { seed: SEED, numRuns: 500 }));
});

test('an id stays taken from its POST until its answer comes, even after the POST closed; then it is free', () => {
  const s = new HttpSession('s', noCore, '2025-06-18');
  const res = new FakeResponse();
  const ex = new Exchange(res as unknown as ReplyTarget, new Set([idKey(7), idKey('7')]), 'json', true, s.replyHeaders, s.ids);
  s.addExchange(ex);
  assert.ok(s.inFlight(idKey(7)) && s.inFlight(idKey('7')));
  s.route(answerTo(7, {}));
  assert.not.ok(s.inFlight(idKey(7)), 'answered');
  assert.ok(s.inFlight(idKey('7')), 'the string id "7" is another id');
  ex.abandon();
  s.removeExchange(ex);
  assert.ok(s.inFlight(idKey('7')), 'its POST is gone, its answer may still come');
  s.route(answerTo('7', {}));
  assert.not.ok(s.inFlight(idKey('7')), 'the late answer was dropped and the id is free');
  assert.is(res.body, '', 'nothing was written to the closed POST');
  assert.not.ok(s.busy);
});

test(`at most ABANDONED_IDS_KEPT (${ABANDONED_IDS_KEPT}) ids of closed POSTs are kept per session, the oldest forgotten first`, () => {
  const s = new HttpSession('s', noCore, '2025-06-18');
  for (let i = 0; i <= ABANDONED_IDS_KEPT; i++) {
    const ex = new Exchange(new FakeResponse() as unknown as ReplyTarget, new Set([idKey(i)]), 'json', false, s.replyHeaders, s.ids);
    s.addExchange(ex);
    ex.abandon();
    s.removeExchange(ex);
  }
  assert.not.ok(s.inFlight(idKey(0)));
  assert.ok(s.inFlight(idKey(1)) && s.inFlight(idKey(ABANDONED_IDS_KEPT)));
});

test('progress goes to the stream of the POST whose request it belongs to, not to a newer one; a message of no request to the newest', () => {
  const s = new HttpSession('s', noCore, '2025-06-18');
  const [first, second] = [new FakeResponse(), new FakeResponse()];
  const one = new Exchange(first as unknown as ReplyTarget, new Set([idKey(1)]), 'sse', false, s.replyHeaders, s.ids);
  const two = new Exchange(second as unknown as ReplyTarget, new Set([idKey(2)]), 'sse', false, s.replyHeaders, s.ids);
  s.addExchange(one);
  s.addExchange(two);
  // The same token on both (the client broke the rule): only relatedTo tells them apart.
  s.route(notice('notifications/progress', { progressToken: 'shared', progress: 1 }, 1));
  s.route(notice('notifications/message', { level: 'info', data: {} }));
  s.route(answerTo(1, { done: 1 }));
  s.route(answerTo(2, { done: 2 }));
  assert.match(first.body, /notifications\/progress/);
  assert.match(first.body, /"done":1/);
  assert.not.match(second.body, /notifications\/progress/);
  assert.match(second.body, /notifications\/message/, 'unrelated: the newest POST that may stream');
  assert.not.match(first.body, /"done":2/);
  assert.ok(one.finished && two.finished);
});

test('a message of a request whose POST is gone goes to the GET stream (kept for replay), never to another POST', () => {
  const s = new HttpSession('s', noCore, '2025-06-18');
  const [gone, other] = [new FakeResponse(), new FakeResponse()];
  const closed = new Exchange(gone as unknown as ReplyTarget, new Set([idKey(1)]), 'sse', false, s.replyHeaders, s.ids);
  const open = new Exchange(other as unknown as ReplyTarget, new Set([idKey(2)]), 'sse', false, s.replyHeaders, s.ids);
  s.addExchange(closed);
  s.addExchange(open);
  closed.abandon();
  s.removeExchange(closed);
  s.route(notice('notifications/progress', { progressToken: 't', progress: 1 }, 1));
  s.route(answerTo(2, {}));
  assert.is(gone.body, '');
  assert.not.match(other.body, /notifications\/progress/);
  assert.equal(s.events.after('1'), [], 'the progress is kept for the GET stream, as its first event');
});

test.run();
