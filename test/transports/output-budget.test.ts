// The node's output budget (src/transports/output-budget.ts) under random interleavings of writes,
// drains (noted or not yet), closes and evictions: the total is always the sum of the open backlogs'
// counted bytes and never negative; with every change noted it is the sum of the live backlogs; after a
// note it is within the budget; and an evicted connection held the most of all, measured then.

import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type Backlog, OutputBudget } from '../../src/transports/output-budget.ts';

type Step =
  | { readonly kind: 'write'; readonly at: number; readonly bytes: number }
  | { readonly kind: 'drain'; readonly at: number; readonly bytes: number; readonly noted: boolean }
  | { readonly kind: 'close'; readonly at: number }
  | { readonly kind: 'open' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('write' as const), at: fc.nat(15), bytes: fc.integer({ min: 0, max: 400 }) }),
  fc.record({ kind: fc.constant('drain' as const), at: fc.nat(15), bytes: fc.integer({ min: 0, max: 400 }), noted: fc.boolean() }),
  fc.record({ kind: fc.constant('close' as const), at: fc.nat(15) }),
  fc.constant({ kind: 'open' as const }),
);

/** One simulated connection: its live backlog (what it would measure) and its part of the budget. */
interface Connection { live: number; closed: boolean; evicted: boolean; backlog: Backlog }

function run(maxBytes: number, steps: readonly Step[], noteEveryDrain: boolean): void {
  const budget = new OutputBudget(maxBytes);
  const connections: Connection[] = [];
  const open = () => {
    const c = { live: 0, closed: false, evicted: false } as Connection;
    c.backlog = budget.open({
      measure: () => c.live,
      evict: (eviction) => {
        // The largest of all, measured at the eviction: no open connection holds more.
        for (const other of connections) if (!other.closed && other !== c) assert.ok(other.live <= eviction.bytes, `evicted ${eviction.bytes} while another holds ${other.live}`);
        assert.is(eviction.bytes, c.live);
        assert.ok(eviction.total > eviction.limit, 'only over budget');
        c.live = 0;
        c.closed = true;
        c.evicted = true;
        c.backlog.close();
      },
    });
    connections.push(c);
  };
  open();
  open();
  for (const s of steps) {
    if (s.kind === 'open') {
      open();
      continue;
    }
    const c = connections[s.at % connections.length] as Connection;
    if (s.kind === 'write' && !c.closed) {
      c.live += s.bytes;
      c.backlog.note();
      assert.ok(budget.total <= maxBytes, `over budget after a note: ${budget.total} > ${maxBytes}`);
    } else if (s.kind === 'drain' && !c.closed) {
      c.live -= Math.min(c.live, s.bytes);
      if (s.noted || noteEveryDrain) c.backlog.note();
    } else if (s.kind === 'close') {
      c.live = 0;
      c.closed = true;
      c.backlog.close();
    }
    const counted = connections.filter((x) => !x.closed).reduce((sum, x) => sum + x.backlog.bytes, 0);
    assert.is(budget.total, counted, 'the total is the sum of the open backlogs');
    assert.ok(budget.total >= 0, 'never negative');
    assert.is(budget.size, connections.filter((x) => !x.closed).length, 'closed backlogs are forgotten');
    if (noteEveryDrain) assert.is(budget.total, connections.reduce((sum, x) => sum + (x.closed ? 0 : x.live), 0), 'with every change noted: the sum of the live backlogs');
    for (const x of connections) assert.ok(x.backlog.bytes >= 0);
  }
}

test('random writes, drains and closes: the total is the sum of the live backlogs and never negative', () => {
  fc.assert(fc.property(fc.integer({ min: 1, max: 2000 }), fc.array(step, { maxLength: 200 }), (max, steps) => run(max, steps, true)), { numRuns: 500 });
});

test('drains noted late: the total is the sum of what was counted, and an eviction measures everyone first', () => {
  fc.assert(fc.property(fc.integer({ min: 1, max: 2000 }), fc.array(step, { maxLength: 200 }), (max, steps) => run(max, steps, false)), { numRuns: 500 });
});

test('the write that passes the budget evicts the largest backlog, not the writer', () => {
  const budget = new OutputBudget(1000);
  const evicted: string[] = [];
  const live = new Map<string, number>([['big', 0], ['small', 0]]);
  const backlogs = new Map<string, Backlog>();
  for (const name of live.keys()) {
    backlogs.set(name, budget.open({ measure: () => live.get(name) ?? 0, evict: () => { evicted.push(name); live.set(name, 0); } }));
  }
  live.set('big', 900);
  backlogs.get('big')?.note();
  live.set('small', 200);
  backlogs.get('small')?.note();
  assert.equal(evicted, ['big']);
  assert.is(budget.total, 200);
  assert.is(budget.size, 1);
});

test('a drain not yet noted does not get anyone evicted: the eviction measures every backlog first', () => {
  const budget = new OutputBudget(1000);
  const evicted: string[] = [];
  const live = { a: 900, b: 0 };
  const a = budget.open({ measure: () => live.a, evict: () => evicted.push('a') });
  const b = budget.open({ measure: () => live.b, evict: () => evicted.push('b') });
  a.note();
  live.a = 100;
  live.b = 500;
  b.note();
  assert.equal(evicted, []);
  assert.is(budget.total, 600);
});

test('a budget of no bytes, or not a whole number, is refused', () => {
  assert.throws(() => new OutputBudget(0), /at least 1/);
  assert.throws(() => new OutputBudget(1.5), /whole number/);
});

test.run();
