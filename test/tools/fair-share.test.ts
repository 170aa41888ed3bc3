// Fair admission to the tool pool, without threads: who starts when a slot frees, in what order.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultPrincipalShare, FairShare, PoolQueueFull, type Release } from '../../src/tools/fair-share.ts';

/** Acquires for `principal`/`session`, logging `label` when granted; returns the release once granted. */
function track(share: FairShare, log: string[], principal: string, session: string, label: string, signal?: AbortSignal) {
  let release: Release | null = null;
  const granted = share.acquire({ principal, session }, signal).then((r) => {
    log.push(label);
    release = r;
    return r;
  });
  return { granted, release: () => (release as Release | null)?.() };
}

const settle = () => new Promise<void>((r) => setImmediate(r));

test('the default share is all threads but one, and at least one', () => {
  assert.is(defaultPrincipalShare(1), 1);
  assert.is(defaultPrincipalShare(2), 1);
  assert.is(defaultPrincipalShare(8), 7);
  assert.is(new FairShare({ slots: 4 }).perPrincipal, 3);
});

test('one principal never holds every slot: its other calls wait, and another principal starts at once', async () => {
  const share = new FairShare({ slots: 2 });
  const log: string[] = [];
  const a = [1, 2, 3, 4, 5].map((n) => track(share, log, 'A', 'a1', `A${n}`));
  await settle();
  assert.equal(log, ['A1']);
  const b = track(share, log, 'B', 'b1', 'B1');
  await settle();
  assert.equal(log, ['A1', 'B1'], 'B starts while four of A wait');
  assert.is(share.waiting, 4);
  b.release();
  await settle();
  assert.equal(log, ['A1', 'B1'], 'a free slot beyond its share stays free for someone else');
  a[0]?.release();
  await settle();
  assert.equal(log, ['A1', 'B1', 'A2']);
});

test('waiting principals are served round-robin, not in order of arrival; sessions of one principal take turns', async () => {
  const share = new FairShare({ slots: 1 });
  const log: string[] = [];
  const calls = new Map<string, ReturnType<typeof track>>();
  calls.set('X', track(share, log, 'X', 'x', 'X'));
  await settle();
  // Arrival order: all of A's (from two sessions), then B's, then C's.
  for (const [principal, session, label] of [['A', 'a1', 'A1'], ['A', 'a1', 'A2'], ['A', 'a1', 'A3'], ['A', 'a2', 'A4'], ['B', 'b', 'B1'], ['B', 'b', 'B2'], ['C', 'c', 'C1']] as const) {
    calls.set(label, track(share, log, principal, session, label));
  }
  // Each round: the call that started last ends, and the next one starts.
  for (let round = 0; round < 8; round++) {
    await settle();
    calls.get(log[log.length - 1] as string)?.release();
  }
  await settle();
  assert.equal(log, ['X', 'A1', 'B1', 'C1', 'A4', 'B2', 'A2', 'A3']);
});

test('a call aborted while it waits leaves the queue with the abort reason and never starts', async () => {
  const share = new FairShare({ slots: 1 });
  const log: string[] = [];
  const first = track(share, log, 'A', 'a', 'A1');
  const controller = new AbortController();
  const waiting = track(share, log, 'A', 'a', 'A2', controller.signal);
  const after = track(share, log, 'B', 'b', 'B1');
  await settle();
  controller.abort(new Error('cancelled by the client'));
  const reason = await waiting.granted.then(() => null, (err: Error) => err.message);
  assert.is(reason, 'cancelled by the client');
  first.release();
  await after.granted;
  assert.equal(log, ['A1', 'B1']);
  assert.is(share.waiting, 0);
});

test('a session past its waiting limit is refused at once; others still queue', async () => {
  const share = new FairShare({ slots: 1, maxWaitingPerSession: 2 });
  const log: string[] = [];
  track(share, log, 'A', 'a', 'running');
  track(share, log, 'A', 'a', 'w1');
  track(share, log, 'A', 'a', 'w2');
  const refused = await share.acquire({ principal: 'A', session: 'a' }).then(() => null, (err: unknown) => err);
  assert.instance(refused, PoolQueueFull);
  assert.match((refused as Error).message, 'limit 2');
  const other = share.acquire({ principal: 'A', session: 'other' });
  assert.ok(other instanceof Promise);
  assert.is(share.waiting, 3);
});

test('releasing twice frees one slot only', async () => {
  const share = new FairShare({ slots: 2, perPrincipal: 2 });
  const r1 = await share.acquire({ principal: 'A', session: 'a' });
  await share.acquire({ principal: 'A', session: 'a' });
  r1();
  r1();
  assert.is(share.running, 1);
});

test.run();
