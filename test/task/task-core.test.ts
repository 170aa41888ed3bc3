// The pure task core: the agent loop as events in, actions out, and resumption from the transcript alone
// (what a restarted task actor does). A small host simulator appends entries as the real host does, so
// "crash after every step" can be checked against the run without crashes.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ToolCall } from '../../src/model/types.ts';
import type { Entry, EntryType } from '../../src/store/store.ts';
import { resumeTask, stepTask, type TaskAction, type TaskEvent, type TaskSetup, type TaskState } from '../../src/task/task-core.ts';
import type { ToolOutcome } from '../../src/tools/contract.ts';

const setup = (over: Partial<TaskSetup> = {}): TaskSetup => ({
  conversationId: 'conv-1', harness: 'super-pi-code', maxTurns: 10, local: true, forbidWrites: false, canConfirm: false, ...over,
});

/** The host's part: entries appended in order, the last non-append action is what the task waits on. */
class Host {
  entries: Entry[] = [];
  finished: Extract<TaskAction, { a: 'finish' }> | null = null;
  pending: Extract<TaskAction, { a: 'model' | 'tool' }> | null = null;
  #seq = 0;

  constructor(prompt: string) {
    this.append('user', { text: prompt });
  }

  append(type: EntryType, payload: unknown): void {
    this.entries.push({ seq: ++this.#seq, conversationId: 'conv-1', time: 0, type, payload });
  }

  apply(actions: readonly TaskAction[]): void {
    for (const a of actions) {
      if (a.a === 'append') this.append(a.type, a.payload);
      else if (a.a === 'finish') this.finished = a;
      else if (a.a === 'model' || a.a === 'tool') this.pending = a;
    }
  }
}

const call = (id: string, name: string, args: Record<string, unknown> = {}): ToolCall => ({ id, name, arguments: args });
const ok = (text: string): ToolOutcome => ({ text });
const types = (h: Host) => h.entries.map((e) => e.type);

const core = suite('task core');

core('a fresh run asks the model first, with the prompt as the conversation', () => {
  const h = new Host('fix the bug');
  const { actions } = resumeTask(setup(), h.entries);
  assert.equal(actions.map((a) => a.a), ['progress', 'model']);
  const model = actions[1] as Extract<TaskAction, { a: 'model' }>;
  assert.is(model.turn, 1);
  assert.equal(model.messages, [{ role: 'user', content: 'fix the bug' }]);
});

core('model → tool calls one after another → model → final answer; every step appended before the next', () => {
  const h = new Host('p');
  let step = resumeTask(setup(), h.entries);
  h.apply(step.actions);
  step = stepTask(step.state, { e: 'model', text: 'looking', toolCalls: [call('c1', 'read', { path: 'a' }), call('c2', 'ls')], stopReason: 'tool_calls' });
  h.apply(step.actions);
  assert.equal(types(h), ['user', 'model', 'tool_call']);
  assert.is((h.pending as Extract<TaskAction, { a: 'tool' }>).call.id, 'c1');
  step = stepTask(step.state, { e: 'tool', id: 'c1', outcome: ok('A') });
  h.apply(step.actions);
  assert.equal(types(h), ['user', 'model', 'tool_call', 'tool_result', 'tool_call']);
  step = stepTask(step.state, { e: 'tool', id: 'c2', outcome: ok('B') });
  h.apply(step.actions);
  assert.is((h.pending as Extract<TaskAction, { a: 'model' }>).turn, 2);
  const messages = (h.pending as Extract<TaskAction, { a: 'model' }>).messages;
  assert.equal(messages.slice(-2), [{ role: 'tool', content: 'A', toolCallId: 'c1' }, { role: 'tool', content: 'B', toolCallId: 'c2' }]);
  step = stepTask(step.state, { e: 'model', text: 'done', toolCalls: [], stopReason: 'end' });
  h.apply(step.actions);
  assert.equal(types(h), ['user', 'model', 'tool_call', 'tool_result', 'tool_call', 'tool_result', 'model', 'final']);
  assert.equal(h.finished, { a: 'finish', status: 'completed', text: 'done', isError: false, turns: 2, toolCalls: 2 });
  assert.is(step.state.waiting, 'done');
});

core('a result that does not belong to the running call changes nothing', () => {
  const h = new Host('p');
  let step = resumeTask(setup(), h.entries);
  step = stepTask(step.state, { e: 'model', text: '', toolCalls: [call('c1', 'read', { path: 'a' })], stopReason: 'tool_calls' });
  const late = stepTask(step.state, { e: 'tool', id: 'other', outcome: ok('x') });
  assert.equal(late.actions, []);
  assert.is(late.state, step.state);
  const lateModel = stepTask(step.state, { e: 'model', text: 'x', toolCalls: [], stopReason: 'end' });
  assert.equal(lateModel.actions, []);
});

core('the planner cannot write: the call is recorded and refused on the spot, naming the rule', () => {
  const h = new Host('p');
  let step = resumeTask(setup({ harness: 'super-pi-planner' }), h.entries);
  step = stepTask(step.state, { e: 'model', text: '', toolCalls: [call('w', 'write', { path: 'x', content: 'y' })], stopReason: 'tool_calls' });
  h.apply(step.actions);
  assert.equal(types(h), ['user', 'model', 'tool_call', 'tool_result']);
  const result = h.entries[3]?.payload as { text: string; isError: boolean };
  assert.ok(result.isError);
  assert.match(result.text, /Denied by harness policy/);
  assert.ok(step.actions.every((a) => a.a !== 'tool'), 'no tool runs');
});

core('a remote ask needs elicitation: refused without it, a question with it', () => {
  const refused = stepTask(resumeTask(setup({ local: false }), new Host('p').entries).state,
    { e: 'model', text: '', toolCalls: [call('b', 'bash', { command: 'ls' })], stopReason: 'tool_calls' });
  assert.ok(refused.actions.some((a) => a.a === 'append' && a.type === 'tool_result' && /cannot be asked/.test(String(a.payload.text))));
  const asked = stepTask(resumeTask(setup({ local: false, canConfirm: true }), new Host('p').entries).state,
    { e: 'model', text: '', toolCalls: [call('b', 'bash', { command: 'ls' })], stopReason: 'tool_calls' });
  const tool = asked.actions.find((a) => a.a === 'tool') as Extract<TaskAction, { a: 'tool' }>;
  assert.match(tool.confirm ?? '', /run the command: ls/);
});

core('super-pi-code snapshots what write and edit change: the snapshot is appended before the result', () => {
  const h = new Host('p');
  let step = resumeTask(setup(), h.entries);
  step = stepTask(step.state, { e: 'model', text: '', toolCalls: [call('w', 'write', { path: 'f', content: 'new' })], stopReason: 'tool_calls' });
  h.apply(step.actions);
  assert.ok((h.pending as Extract<TaskAction, { a: 'tool' }>).snapshot);
  step = stepTask(step.state, { e: 'tool', id: 'w', outcome: ok('wrote'), snapshot: { path: 'f', before: 'old', after: 'new' } });
  h.apply(step.actions);
  assert.equal(types(h).slice(-2), ['file_snapshot', 'tool_result']);
  assert.equal(h.entries.at(-2)?.payload, { path: 'f', before: 'old', after: 'new', id: 'w' });
});

core('max_turns ends the run with a failure that says how to continue', () => {
  const h = new Host('p');
  let step = resumeTask(setup({ maxTurns: 1 }), h.entries);
  step = stepTask(step.state, { e: 'model', text: '', toolCalls: [call('c', 'ls')], stopReason: 'tool_calls' });
  step = stepTask(step.state, { e: 'tool', id: 'c', outcome: ok('.') });
  h.apply(step.actions);
  assert.is(h.finished?.status, 'failed');
  assert.match(h.finished?.text ?? '', /max_turns.*conversation_id conv-1/);
});

core('a stop records why and finishes cancelled; later events change nothing', () => {
  const h = new Host('p');
  let step = resumeTask(setup(), h.entries);
  step = stepTask(step.state, { e: 'stop', why: 'the task was cancelled by the client' });
  h.apply(step.actions);
  assert.equal(types(h), ['user', 'error']);
  assert.equal(h.entries[1]?.payload, { message: 'the task was cancelled by the client', status: 'cancelled' });
  assert.is(h.finished?.status, 'cancelled');
  assert.equal(stepTask(step.state, { e: 'model', text: 'x', toolCalls: [], stopReason: 'end' }).actions, []);
});

core('a model failure is recorded and fails the task', () => {
  const h = new Host('p');
  const step = stepTask(resumeTask(setup(), h.entries).state, { e: 'modelFailed', message: 'openai-compatible: HTTP 500' });
  h.apply(step.actions);
  assert.equal(types(h), ['user', 'error']);
  assert.equal(h.finished, { a: 'finish', status: 'failed', text: 'openai-compatible: HTTP 500', isError: true, turns: 1, toolCalls: 0 });
});

const resume = suite('task core: resuming after a crash');

/** Drives a task to its end with scripted model replies and tool outcomes, crashing (resuming from the entries) when `crashAt(n)` says so before event n. */
function drive(s: TaskSetup, replies: { text: string; toolCalls: ToolCall[] }[], crashAt: (n: number) => boolean): Host {
  const h = new Host('go');
  let step = resumeTask(s, h.entries);
  h.apply(step.actions);
  for (let n = 0; n < 100 && !h.finished; n++) {
    if (crashAt(n)) {
      h.pending = null;
      step = resumeTask(s, h.entries);
      h.apply(step.actions);
      continue;
    }
    const pending = h.pending;
    if (!pending) throw new Error('the task waits on nothing but has not finished');
    h.pending = null;
    let event: TaskEvent;
    if (pending.a === 'model') {
      const reply = replies[pending.turn - 1] ?? { text: 'out of script', toolCalls: [] };
      event = { e: 'model', ...reply, stopReason: reply.toolCalls.length > 0 ? 'tool_calls' : 'end' };
    } else {
      event = { e: 'tool', id: pending.call.id, outcome: ok(`result of ${pending.call.id}`) };
    }
    step = stepTask(step.state, event);
    h.apply(step.actions);
  }
  return h;
}

const script = [
  { text: 't1', toolCalls: [call('r1', 'read', { path: 'a' }), call('g1', 'grep', { pattern: 'x' })] },
  { text: 't2', toolCalls: [call('l1', 'ls')] },
  { text: 'answer', toolCalls: [] },
];

resume('idempotent calls: a crash at any point gives exactly the transcript of the run without crashes', () => {
  const clean = drive(setup(), script, () => false);
  const shape = (h: Host) => h.entries.map((e) => [e.type, e.payload]);
  for (let at = 0; at < 12; at++) {
    const crashed = drive(setup(), script, (n) => n === at || n === at + 3);
    assert.equal(shape(crashed), shape(clean), `crashes before events ${at} and ${at + 3}`);
    assert.equal(crashed.finished, clean.finished);
  }
});

resume('a started idempotent call is re-run in place: no second tool_call entry', () => {
  const h = new Host('go');
  h.append('model', { text: '', toolCalls: [call('r1', 'read', { path: 'a' })] });
  h.append('tool_call', { id: 'r1', name: 'read', arguments: { path: 'a' } });
  const { actions, state } = resumeTask(setup(), h.entries);
  assert.equal(actions.filter((a) => a.a === 'append'), []);
  assert.is((actions.find((a) => a.a === 'tool') as Extract<TaskAction, { a: 'tool' }>).call.id, 'r1');
  assert.is(state.toolCalls, 1);
  assert.is(state.turn, 1);
});

resume('a started call that is not idempotent is recorded as interrupted, the model is told, and the next call runs', () => {
  const h = new Host('go');
  h.append('model', { text: '', toolCalls: [call('b1', 'bash', { command: 'make deploy' }), call('r1', 'read', { path: 'a' })] });
  h.append('tool_call', { id: 'b1', name: 'bash', arguments: { command: 'make deploy' } });
  let step = resumeTask(setup(), h.entries);
  h.apply(step.actions);
  assert.equal(types(h).slice(-2), ['tool_interrupted', 'tool_call']);
  assert.is((h.pending as Extract<TaskAction, { a: 'tool' }>).call.id, 'r1');
  step = stepTask(step.state, { e: 'tool', id: 'r1', outcome: ok('A') });
  h.apply(step.actions);
  const messages = (h.pending as Extract<TaskAction, { a: 'model' }>).messages;
  const told = messages.find((m) => m.toolCallId === 'b1');
  assert.match(told?.content ?? '', /interrupted.*effect is unknown/);
  assert.is(step.state.toolCalls, 2);
});

resume('edit is not re-run; write (idempotent) is', () => {
  for (const [name, rerun, args] of [['edit', false, { path: 'f', oldText: 'a', newText: 'b' }], ['write', true, { path: 'f', content: 'c' }]] as const) {
    const h = new Host('go');
    h.append('model', { text: '', toolCalls: [call('x', name, args)] });
    h.append('tool_call', { id: 'x', name, arguments: args });
    const { actions } = resumeTask(setup(), h.entries);
    assert.is(actions.some((a) => a.a === 'tool'), rerun, name);
    assert.is(actions.some((a) => a.a === 'append' && a.type === 'tool_interrupted'), !rerun, name);
  }
});

resume('a write re-run after a crash past its before-image gets that durable before-image back, not a new snapshot', () => {
  const h = new Host('go');
  h.append('model', { text: '', toolCalls: [call('x', 'write', { path: 'f', content: 'new' })] });
  h.append('tool_call', { id: 'x', name: 'write', arguments: { path: 'f', content: 'new' } });
  h.append('file_snapshot', { id: 'x', path: 'f', before: 'original', stage: 'before' });
  const tool = resumeTask(setup(), h.entries).actions.find((a) => a.a === 'tool') as Extract<TaskAction, { a: 'tool' }>;
  assert.equal(tool.stored, { id: 'x', path: 'f', before: 'original', stage: 'before' });
  const fresh = resumeTask(setup(), h.entries.slice(0, -1)).actions.find((a) => a.a === 'tool') as Extract<TaskAction, { a: 'tool' }>;
  assert.is(fresh.stored, undefined, 'without one, the host snapshots the file itself');
});

resume('a crash while the model was asked asks again for the same turn', () => {
  const h = new Host('go');
  h.append('model', { text: '', toolCalls: [call('r1', 'read', { path: 'a' })] });
  h.append('tool_call', { id: 'r1', name: 'read', arguments: { path: 'a' } });
  h.append('tool_result', { id: 'r1', name: 'read', text: 'A', isError: false });
  const { actions } = resumeTask(setup(), h.entries);
  assert.equal(actions.filter((a) => a.a === 'append'), []);
  assert.is((actions.find((a) => a.a === 'model') as Extract<TaskAction, { a: 'model' }>).turn, 2);
});

resume('a run that already ended is only answered again, nothing appended', () => {
  const h = new Host('go');
  h.append('model', { text: 'the answer', toolCalls: [] });
  h.append('final', { text: 'the answer' });
  const { actions, state } = resumeTask(setup(), h.entries);
  assert.equal(actions, [{ a: 'finish', status: 'completed', text: 'the answer', isError: false, turns: 1, toolCalls: 0 }]);
  assert.is((state as TaskState).waiting, 'done');
});

resume('a model answer recorded without its final entry is finished, once', () => {
  const h = new Host('go');
  h.append('model', { text: 'the answer', toolCalls: [] });
  const step = resumeTask(setup(), h.entries);
  h.apply(step.actions);
  assert.equal(types(h), ['user', 'model', 'final']);
  assert.is(h.finished?.status, 'completed');
});

resume('a continued conversation: earlier runs are history, the last prompt starts this run', () => {
  const h = new Host('first');
  h.append('model', { text: 'one', toolCalls: [] });
  h.append('final', { text: 'one' });
  h.append('user', { text: 'second' });
  const { actions, state } = resumeTask(setup(), h.entries);
  const model = actions.find((a) => a.a === 'model') as Extract<TaskAction, { a: 'model' }>;
  assert.equal(model.messages.map((m) => m.content), ['first', 'one', 'second']);
  assert.is(model.turn, 1);
  assert.is(state.toolCalls, 0);
});

core.run();
resume.run();
