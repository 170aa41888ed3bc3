// Tool deadlines, on a fake clock: a call past its deadline is aborted and answered with the deadline
// error (after ABORT_GRACE_MS for a body that ignores its signal); a call that finishes before it is
// answered with its result and never aborted.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EffectRunner } from '../../src/connection/effect-runner.ts';
import { ABORT_GRACE_MS } from '../../src/limits.ts';
import type { Effect, EffectResult } from '../../src/mcp/effects.ts';
import { FakeClock } from '../../src/time/fake-clock.ts';
import type { ToolContext, ToolExecutor, ToolOutcome } from '../../src/tools/contract.ts';

const TOOL_TIMEOUT_MS = 30_000;
const logger = { level: 'error' as const, log: () => undefined };
const settle = () => new Promise<void>((r) => setImmediate(r));

const call = (ticket: number): Effect => ({ kind: 'runTool', ticket, requestId: ticket, tool: 'grep', args: { pattern: 'x' }, harness: 'super-pi-code', client: { sampling: false, elicitation: false } });

/** A runner on a fake clock whose tool bodies finish when the test says (or never). */
function runner(options: { obeysAbort: boolean }) {
  const clock = new FakeClock();
  const results: EffectResult[] = [];
  const contexts: ToolContext[] = [];
  const finishers: ((outcome: ToolOutcome) => void)[] = [];
  const executeTool: ToolExecutor = (_tool, _args, _harness, ctx) => new Promise((resolve, reject) => {
    contexts.push(ctx);
    finishers.push(resolve);
    if (options.obeysAbort) ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
  });
  const effects = new EffectRunner({ workspace: '/nowhere', logger, toolTimeoutMs: TOOL_TIMEOUT_MS, executeTool, clock }, (r) => results.push(r));
  return { clock, effects, results, contexts, finishers };
}

test('the abort grace is 2 s', () => {
  assert.is(ABORT_GRACE_MS, 2000);
});

test('a tool call past its deadline has its work aborted and is answered with the deadline error', async () => {
  const { clock, effects, results, contexts } = runner({ obeysAbort: true });
  effects.run(call(1));
  await settle();
  clock.advance(TOOL_TIMEOUT_MS - 1);
  await settle();
  assert.equal(results, []);
  assert.is(contexts[0]?.signal.aborted, false);
  clock.advance(1);
  await settle();
  assert.is(contexts[0]?.signal.aborted, true);
  assert.equal(results, [{ kind: 'toolDone', ticket: 1, outcome: { text: 'Stopped: the tool call passed its deadline of 30 s', isError: true } }]);
  assert.is(effects.inFlight, 0);
});

test('a body that ignores the abort is answered for ABORT_GRACE_MS after the deadline; its late result is dropped', async () => {
  const { clock, effects, results, finishers } = runner({ obeysAbort: false });
  effects.run(call(2));
  await settle();
  clock.advance(TOOL_TIMEOUT_MS + ABORT_GRACE_MS - 1);
  await settle();
  assert.equal(results, []);
  clock.advance(1);
  await settle();
  assert.equal(results, [{ kind: 'toolDone', ticket: 2, outcome: { text: 'Stopped: the tool call passed its deadline of 30 s', isError: true } }]);
  finishers[0]?.({ text: 'too late' });
  await settle();
  assert.is(results.length, 1);
});

test('a tool call that finishes before its deadline is answered with its result and never aborted', async () => {
  const { clock, effects, results, contexts, finishers } = runner({ obeysAbort: true });
  effects.run(call(3));
  await settle();
  clock.advance(TOOL_TIMEOUT_MS - 1000);
  finishers[0]?.({ text: 'found it' });
  await settle();
  assert.equal(results, [{ kind: 'toolDone', ticket: 3, outcome: { text: 'found it' } }]);
  clock.advance(TOOL_TIMEOUT_MS);
  await settle();
  assert.is(contexts[0]?.signal.aborted, false);
  assert.is(results.length, 1);
  assert.is(clock.pendingTimers, 0, 'the deadline was disarmed');
});

test('the tool body is given the runner clock for its own waits', async () => {
  const { clock, effects, contexts, finishers } = runner({ obeysAbort: true });
  effects.run(call(4));
  await settle();
  assert.is(contexts[0]?.clock, clock);
  finishers[0]?.({ text: 'ok' });
  await settle();
});

test.run();
