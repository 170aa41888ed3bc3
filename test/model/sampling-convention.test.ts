import type { CreateMessageRequest, CreateMessageResult } from '@modelcontextprotocol/sdk/types.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  SamplingProvider,
  UNREADABLE_TOOL_NAME,
  describeToolsForSampling,
  parseSampledTurn,
  toSamplingRequest,
  type SampleFn,
} from '../../src/model/sampling-convention.ts';
import { ModelError, type ChatMessage, type ToolSpec } from '../../src/model/types.ts';
import { guarded } from '../hang-guard.ts';

const tools: ToolSpec[] = [
  { name: 'read', description: 'Read a file', inputSchema: { type: 'object', properties: { path: { type: 'string' }, limit: { type: 'integer' } }, required: ['path'] } },
  { name: 'ls', description: 'List a directory', inputSchema: { type: 'object', properties: {} } },
];

// --- parseSampledTurn --------------------------------------------------------------------------------

test('parse: plain text is the final answer', () => {
  assert.equal(parseSampledTurn('  The file exports `a`.\n'), { text: 'The file exports `a`.', toolCalls: [], stopReason: 'end' });
});

test('parse: one tool call', () => {
  assert.equal(parseSampledTurn('<tool_call>{"name": "read", "arguments": {"path": "src/a.ts"}}</tool_call>'), {
    text: '',
    toolCalls: [{ id: 'sampled-1', name: 'read', arguments: { path: 'src/a.ts' } }],
    stopReason: 'tool_calls',
  });
});

test('parse: two tool calls with text around them, ids from firstId', () => {
  const turn = parseSampledTurn(
    'I will look at both.\n<tool_call>\n  {"name": "read", "arguments": {"path": "a"}}\n</tool_call>\n\n<tool_call>{"name":"ls"}</tool_call>\n',
    { firstId: 4 },
  );
  assert.equal(turn, {
    text: 'I will look at both.',
    toolCalls: [
      { id: 'sampled-4', name: 'read', arguments: { path: 'a' } },
      { id: 'sampled-5', name: 'ls', arguments: {} },
    ],
    stopReason: 'tool_calls',
  });
});

test('parse: code fences around the tags, inside the tags, and tag case', () => {
  const around = parseSampledTurn('```xml\n<tool_call>{"name": "read", "arguments": {"path": "a"}}</tool_call>\n```');
  assert.equal(around.toolCalls, [{ id: 'sampled-1', name: 'read', arguments: { path: 'a' } }]);
  assert.is(around.text, '');
  const inside = parseSampledTurn('<tool_call>\n```json\n{"name": "read", "arguments": {"path": "b"}}\n```\n</tool_call>');
  assert.equal(inside.toolCalls, [{ id: 'sampled-1', name: 'read', arguments: { path: 'b' } }]);
  const upper = parseSampledTurn('<TOOL_CALL>{"name": "ls", "arguments": {}}</TOOL_CALL>');
  assert.equal(upper.toolCalls, [{ id: 'sampled-1', name: 'ls', arguments: {} }]);
});

test('parse: arguments written as a JSON string are accepted; an unclosed last block with valid JSON too', () => {
  const turn = parseSampledTurn('<tool_call>{"name": "read", "arguments": "{\\"path\\": \\"c\\"}"}</tool_call><tool_call>{"name": "ls", "arguments": {}}');
  assert.equal(turn.toolCalls, [
    { id: 'sampled-1', name: 'read', arguments: { path: 'c' } },
    { id: 'sampled-2', name: 'ls', arguments: {} },
  ]);
});

test('parse: a closing tag inside the arguments does not end the block', () => {
  const content = 'Call tools as <tool_call>{...}</tool_call> blocks.';
  const turn = parseSampledTurn(`<tool_call>${JSON.stringify({ name: 'write', arguments: { path: 'NOTES.md', content } })}</tool_call> then <tool_call>{"name": "ls"}</tool_call>`);
  assert.equal(turn.toolCalls, [
    { id: 'sampled-1', name: 'write', arguments: { path: 'NOTES.md', content } },
    { id: 'sampled-2', name: 'ls', arguments: {} },
  ]);
  assert.is(turn.text, 'then');
});

test('parse: invalid JSON becomes a call with a parseError the loop can send back; valid calls beside it are kept', () => {
  const turn = parseSampledTurn('<tool_call>{"name": "read", "arguments": {"path": "a"}</tool_call>\n<tool_call>{"name": "ls", "arguments": {}}</tool_call>');
  assert.is(turn.stopReason, 'tool_calls');
  const [bad, good] = turn.toolCalls;
  assert.is(bad?.id, 'sampled-1');
  assert.is(bad?.name, 'read', 'the name is recovered for the error');
  assert.equal(bad?.arguments, {});
  assert.match(bad?.parseError ?? '', /^Tool call 1 could not be read: its content is not valid JSON/);
  assert.match(bad?.parseError ?? '', /<tool_call>\{"name": "<tool name>", "arguments": \{…\}\}<\/tool_call>/);
  assert.equal(good, { id: 'sampled-2', name: 'ls', arguments: {} });
});

test('parse: a block without a name, arguments that are not an object, garbage', () => {
  const turn = parseSampledTurn('<tool_call>{"arguments": {}}</tool_call><tool_call>{"name": "read", "arguments": [1]}</tool_call><tool_call>read src/a.ts</tool_call>');
  assert.match(turn.toolCalls[0]?.parseError ?? '', /string "name"/);
  assert.is(turn.toolCalls[0]?.name, UNREADABLE_TOOL_NAME);
  assert.match(turn.toolCalls[1]?.parseError ?? '', /"arguments" must be a JSON object/);
  assert.is(turn.toolCalls[1]?.name, 'read');
  assert.match(turn.toolCalls[2]?.parseError ?? '', /not valid JSON.*You wrote: read src\/a\.ts/s);
  assert.equal(turn.toolCalls.map((c) => c.id), ['sampled-1', 'sampled-2', 'sampled-3']);
});

// --- describeToolsForSampling and toSamplingRequest ----------------------------------------------------

test('the tools appendix states the convention and lists every tool with its schema', () => {
  const text = describeToolsForSampling(tools);
  assert.ok(text.includes('For example: <tool_call>{"name":"read","arguments":{"path":"..."}}</tool_call>'), text);
  assert.ok(text.includes('answer in plain text without any tool_call block: that answer is your final answer'));
  assert.ok(text.includes('Tool result for <tool name> (<call id>):'));
  assert.ok(text.includes('## read\n\nRead a file\n\nInput schema:\n```json\n{\n  "type": "object"'));
  assert.ok(text.includes('## ls\n\nList a directory'));
  assert.is(describeToolsForSampling([]), '');
});

test('toSamplingRequest: system prompt with the appendix, calls as blocks, results as user text, roles joined', () => {
  const messages: ChatMessage[] = [
    { role: 'system', content: 'Workspace: /ws' },
    { role: 'user', content: 'Summarise a and b.' },
    {
      role: 'assistant',
      content: 'Reading both.',
      toolCalls: [
        { id: 'sampled-1', name: 'read', arguments: { path: 'a' } },
        { id: 'sampled-2', name: 'read', arguments: { path: 'b' } },
      ],
    },
    { role: 'tool', toolCallId: 'sampled-1', content: 'A' },
    { role: 'tool', toolCallId: 'sampled-2', content: 'B' },
  ];
  const params = toSamplingRequest({ system: 'Be brief.', messages, tools }, { modelPreferences: { hints: [{ name: 'claude' }] } });
  assert.is(params.systemPrompt, `Be brief.\n\nWorkspace: /ws\n\n${describeToolsForSampling(tools)}`);
  assert.is(params.maxTokens, 8192);
  assert.equal(params.modelPreferences, { hints: [{ name: 'claude' }] });
  assert.equal(params.messages, [
    { role: 'user', content: { type: 'text', text: 'Summarise a and b.' } },
    {
      role: 'assistant',
      content: {
        type: 'text',
        text: 'Reading both.\n<tool_call>{"name":"read","arguments":{"path":"a"}}</tool_call>\n<tool_call>{"name":"read","arguments":{"path":"b"}}</tool_call>',
      },
    },
    { role: 'user', content: { type: 'text', text: 'Tool result for read (sampled-1):\nA\n\nTool result for read (sampled-2):\nB' } },
  ]);
});

// --- SamplingProvider ------------------------------------------------------------------------------------

function scriptedSample(answers: CreateMessageResult[], seen: CreateMessageRequest['params'][]): SampleFn {
  return async (params) => {
    seen.push(params);
    const next = answers.shift();
    if (!next) throw new Error('no more answers');
    return next;
  };
}

const textResult = (text: string, stopReason = 'endTurn'): CreateMessageResult => ({ model: 'host-model', role: 'assistant', stopReason, content: { type: 'text', text } });

test('SamplingProvider: a tool call, then the final answer; ids continue across the conversation', async () => {
  const seen: CreateMessageRequest['params'][] = [];
  const provider = new SamplingProvider(
    scriptedSample([textResult('<tool_call>{"name": "read", "arguments": {"path": "a"}}</tool_call>'), textResult('<tool_call>{"name": "ls"}</tool_call>'), textResult('All done.')], seen),
    { maxTokens: 1000 },
  );
  const messages: ChatMessage[] = [{ role: 'user', content: 'go' }];
  const first = await provider.complete({ system: 's', messages, tools });
  assert.equal(first.toolCalls, [{ id: 'sampled-1', name: 'read', arguments: { path: 'a' } }]);
  messages.push({ role: 'assistant', content: first.text, toolCalls: first.toolCalls }, { role: 'tool', toolCallId: 'sampled-1', content: 'A' });
  const second = await provider.complete({ system: 's', messages, tools });
  assert.equal(second.toolCalls, [{ id: 'sampled-2', name: 'ls', arguments: {} }]);
  messages.push({ role: 'assistant', content: second.text, toolCalls: second.toolCalls }, { role: 'tool', toolCallId: 'sampled-2', content: 'a.ts' });
  const third = await provider.complete({ system: 's', messages, tools });
  assert.equal(third, { text: 'All done.', toolCalls: [], stopReason: 'end' });
  assert.is(seen[0]?.maxTokens, 1000);
  assert.equal(seen[2]?.messages.at(-1), { role: 'user', content: { type: 'text', text: 'Tool result for ls (sampled-2):\na.ts' } });
});

test('SamplingProvider: maxTokens is length; a non-text answer and a failing client are ModelErrors', async () => {
  const provider = new SamplingProvider(
    scriptedSample([textResult('half an answ', 'maxTokens'), { model: 'm', role: 'assistant', content: { type: 'image', data: 'AA==', mimeType: 'image/png' } }], []),
  );
  const req = { system: '', messages: [{ role: 'user' as const, content: 'go' }], tools };
  assert.is((await provider.complete(req)).stopReason, 'length');
  const image = await provider.complete(req).catch((e: unknown) => e);
  assert.instance(image, ModelError);
  assert.match((image as ModelError).message, /^mcp-sampling: the client answered with image content/);
  const refused = await provider.complete(req).catch((e: unknown) => e);
  assert.instance(refused, ModelError);
  assert.match((refused as ModelError).message, /^mcp-sampling: the client's sampling\/createMessage failed: no more answers/);
  assert.instance((refused as ModelError).cause, Error);
});

test('SamplingProvider: an abort rejects at once even when the client never answers', async () => {
  let signalSeen: AbortSignal | undefined;
  const provider = new SamplingProvider((_params, options) => {
    signalSeen = options.signal;
    return new Promise<CreateMessageResult>(() => {});
  });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 50);
  // The client never answers: without the abort this would stay pending for ever (the guard fails it).
  const err = await guarded(provider.complete({ system: '', messages: [], tools: [], signal: controller.signal }), 'the aborted sampling call').catch((e: unknown) => e);
  assert.instance(err, ModelError);
  assert.match((err as ModelError).message, /aborted/);
  assert.is(signalSeen, controller.signal, 'the signal reaches the MCP side, which can send notifications/cancelled');
});

test.run();
