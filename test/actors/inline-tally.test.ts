// A scheduler thread's tally of inline calls: counted on plain numbers, reported in batches (at
// MAX_INLINE_BATCH calls, INLINE_REPORT_MS after the first unreported one, or on a flush), and nothing
// counted is lost or reported twice, whatever the order of calls and flushes.

import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { INLINE_REPORT_MS, InlineTally, type InlineSeries, MAX_INLINE_BATCH, type Schedule } from '../../src/actors/inline-tally.ts';

/** A clock the test moves by hand: the pending timer, and whether it was cancelled. */
function manualTimer() {
  const timers: { fn: () => void; ms: number; cancelled: boolean }[] = [];
  const schedule: Schedule = (fn, ms) => {
    const t = { fn, ms, cancelled: false };
    timers.push(t);
    return () => { t.cancelled = true; };
  };
  const fire = () => {
    for (const t of timers.splice(0)) if (!t.cancelled) t.fn();
  };
  return { schedule, timers, fire };
}

function tally() {
  const reports: InlineSeries[][] = [];
  const timer = manualTimer();
  return { t: new InlineTally((s) => reports.push(s), timer.schedule), reports, timer };
}

test('nothing is reported per call: the first call arms one timer of INLINE_REPORT_MS, and its firing reports the batch', () => {
  const { t, reports, timer } = tally();
  t.record('read', 'super-pi-code', false, 0.5);
  t.record('read', 'super-pi-code', true, 0.25);
  t.record('read', 'super-pi-planner', false, 1);
  assert.is(reports.length, 0);
  assert.equal(timer.timers.map((x) => x.ms), [INLINE_REPORT_MS]);
  timer.fire();
  assert.equal(reports, [[
    { tool: 'read', harness: 'super-pi-code', ok: 1, error: 1, latenciesMs: [0.5, 0.25] },
    { tool: 'read', harness: 'super-pi-planner', ok: 1, error: 0, latenciesMs: [1] },
  ]]);
});

test('the MAX_INLINE_BATCH-th call is reported at once, without waiting for the timer, which is cancelled', () => {
  const { t, reports, timer } = tally();
  for (let i = 0; i < MAX_INLINE_BATCH; i++) t.record('read', 'super-pi-code', false, i);
  assert.is(reports.length, 1);
  assert.is(reports[0]?.[0]?.ok, MAX_INLINE_BATCH);
  assert.is(reports[0]?.[0]?.latenciesMs.length, MAX_INLINE_BATCH);
  assert.ok(timer.timers[0]?.cancelled, 'the pending timer is cancelled');
  timer.fire();
  assert.is(reports.length, 1, 'the cancelled timer reports nothing more');
});

test('a flush reports at once; a flush with nothing counted sends nothing', () => {
  const { t, reports } = tally();
  t.flush();
  assert.is(reports.length, 0);
  t.record('read', 'super-pi-code', false, 2);
  t.flush();
  assert.equal(reports, [[{ tool: 'read', harness: 'super-pi-code', ok: 1, error: 0, latenciesMs: [2] }]]);
});

test('property: whatever the order of calls, flushes and timer firings, every call is reported exactly once, in order, in batches of at most MAX_INLINE_BATCH', () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('call' as const), harness: fc.constantFrom('super-pi-code', 'super-pi-planner'), isError: fc.boolean(), repeat: fc.integer({ min: 1, max: 700 }) }),
    fc.record({ kind: fc.constant('flush' as const) }),
    fc.record({ kind: fc.constant('timer' as const) }),
  );
  fc.assert(fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
    const { t, reports, timer } = tally();
    const sent: { harness: string; isError: boolean; ms: number }[] = [];
    for (const o of ops) {
      if (o.kind === 'flush') t.flush();
      else if (o.kind === 'timer') timer.fire();
      else for (let i = 0; i < o.repeat; i++) {
        const call = { harness: o.harness, isError: o.isError, ms: sent.length };
        sent.push(call);
        t.record('read', call.harness, call.isError, call.ms);
      }
    }
    t.flush();
    const got: { harness: string; isError: boolean; ms: number }[] = [];
    for (const report of reports) {
      assert.ok(report.length > 0, 'no empty report');
      assert.ok(report.reduce((n, s) => n + s.latenciesMs.length, 0) <= MAX_INLINE_BATCH, 'a report holds at most MAX_INLINE_BATCH calls');
      for (const s of report) {
        assert.is(s.ok + s.error, s.latenciesMs.length);
        assert.equal(s.latenciesMs, [...s.latenciesMs].sort((a, b) => a - b), 'a series keeps its calls in the order they ran');
        assert.is(s.error, s.latenciesMs.filter((ms) => sent[ms]?.isError).length, 'errors counted as errors');
        for (const ms of s.latenciesMs) got.push({ harness: s.harness, isError: sent[ms]?.isError ?? false, ms });
      }
    }
    got.sort((a, b) => a.ms - b.ms);
    assert.equal(got, sent);
  }), { numRuns: 200 });
});

test.run();
