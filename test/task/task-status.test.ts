// A harness task's result rebuilt from its transcript (what tasks/get inlines on any node): the same
// text, error flag and structuredContent the live run answered with, for each way a run ends.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Conversation, Entry, EntryType } from '../../src/store/store.ts';
import { outcomeOf } from '../../src/task/task-status.ts';

const conversation = (status: Conversation['status']): Conversation =>
  ({ id: 'conv-1', principal: 'local', sessionId: 's', harness: 'super-pi-code', status, createdAt: 0, updatedAt: 0, title: null });

function transcript(...steps: [EntryType, Record<string, unknown>][]): Entry[] {
  return steps.map(([type, payload], i) => ({ seq: i + 1, conversationId: 'conv-1', time: 0, type, payload }));
}

const readAndAnswer: [EntryType, Record<string, unknown>][] = [
  ['user', { text: 'What does notes.txt say?' }],
  ['model', { text: '', toolCalls: [{ id: 'c1', name: 'read', arguments: { path: 'notes.txt' } }] }],
  ['tool_call', { id: 'c1', name: 'read', arguments: { path: 'notes.txt' } }],
  ['tool_result', { id: 'c1', name: 'read', text: 'aubergine', isError: false }],
  ['model', { text: 'It says aubergine.', toolCalls: [] }],
  ['final', { text: 'It says aubergine.' }],
];

const test = suite('outcomeOf: the harness_task result from the transcript');

test('a completed run: the final answer, with turns and tool calls of the last run', () => {
  assert.equal(outcomeOf(conversation('completed'), transcript(...readAndAnswer)), {
    text: 'It says aubergine.', isError: false,
    structured: { conversation_id: 'conv-1', harness: 'super-pi-code', status: 'completed', turns: 2, tool_calls: 1, answer: 'It says aubergine.' },
  });
});

test('a continued conversation: only its last run counts', () => {
  const again = transcript(...readAndAnswer, ['user', { text: 'And now?' }], ['model', { text: 'Still aubergine.', toolCalls: [] }], ['final', { text: 'Still aubergine.' }]);
  const outcome = outcomeOf(conversation('completed'), again);
  assert.is(outcome?.text, 'Still aubergine.');
  assert.equal([outcome?.structured?.turns, outcome?.structured?.tool_calls], [1, 0]);
});

test('a failed run: its error message, isError, status failed', () => {
  const failed = transcript(['user', { text: 'go' }], ['error', { message: 'the model endpoint answered 500', status: 'failed' }]);
  const outcome = outcomeOf(conversation('failed'), failed);
  assert.equal([outcome?.text, outcome?.isError, outcome?.structured?.status], ['the model endpoint answered 500', true, 'failed']);
});

test('a cancelled run: "Stopped: why." as the live run says it', () => {
  const cancelled = transcript(['user', { text: 'go' }], ['error', { message: 'the task was cancelled by the client', status: 'cancelled' }]);
  const outcome = outcomeOf(conversation('cancelled'), cancelled);
  assert.equal([outcome?.text, outcome?.isError, outcome?.structured?.status], ['Stopped: the task was cancelled by the client.', true, 'cancelled']);
});

test('an interrupted conversation: why (the store\'s interrupted entry) and how to continue it', () => {
  const died = transcript(['user', { text: 'go' }], ['interrupted', { message: 'the process that ran it stopped' }]);
  const outcome = outcomeOf(conversation('interrupted'), died);
  assert.match(outcome?.text ?? '', /^The task was interrupted: the process that ran it stopped\. .*conversation_id conv-1/);
  assert.is(outcome?.structured?.status, 'interrupted');
  assert.match(outcomeOf(conversation('interrupted'), transcript(['user', { text: 'go' }]))?.text ?? '', /interrupted/);
});

test('a transcript with no finished run, or no prompt, gives no result', () => {
  assert.is(outcomeOf(conversation('completed'), transcript(['user', { text: 'go' }])), null);
  assert.is(outcomeOf(conversation('completed'), []), null);
});

test.run();
