import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ANTHROPIC_DEFAULT_MAX_TOKENS, ANTHROPIC_DEFAULT_MODEL, AnthropicProvider, anthropicConfigFromEnv } from '../../src/model/anthropic.ts';
import type { ChatMessage, ToolSpec } from '../../src/model/types.ts';
import { startScriptedServer } from './fixtures/scripted-server.ts';

const tools: ToolSpec[] = [
  { name: 'read', description: 'Read a file', inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  { name: 'ls', description: 'List a directory', inputSchema: { type: 'object', properties: {} } },
];

test('a tool call, then a final answer: system, tools, tool_use and tool_result blocks, headers', async () => {
  const server = await startScriptedServer([
    {
      body: {
        type: 'message',
        role: 'assistant',
        stop_reason: 'tool_use',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'src/a.ts' } },
          { type: 'tool_use', id: 'toolu_2', name: 'ls', input: {} },
        ],
      },
    },
    { body: { type: 'message', role: 'assistant', stop_reason: 'end_turn', content: [{ type: 'text', text: 'Done.' }] } },
  ]);
  try {
    const provider = new AnthropicProvider({ apiKey: 'sk-ant-secret', model: 'claude-test', baseUrl: `${server.url}/` });
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Workspace: /ws' },
      { role: 'user', content: 'Summarise src/a.ts' },
    ];
    const first = await provider.complete({ system: 'Be brief.', messages, tools });
    assert.equal(first, {
      text: 'Let me look.',
      toolCalls: [
        { id: 'toolu_1', name: 'read', arguments: { path: 'src/a.ts' } },
        { id: 'toolu_2', name: 'ls', arguments: {} },
      ],
      stopReason: 'tool_calls',
    });

    messages.push({ role: 'assistant', content: first.text, toolCalls: first.toolCalls });
    messages.push({ role: 'tool', toolCallId: 'toolu_1', content: 'export const a = 1;' });
    messages.push({ role: 'tool', toolCallId: 'toolu_2', content: 'a.ts' });
    messages.push({ role: 'user', content: 'Keep it short.' });
    const second = await provider.complete({ system: 'Be brief.', messages, tools, maxTokens: 50 });
    assert.equal(second, { text: 'Done.', toolCalls: [], stopReason: 'end' });

    const [r1, r2] = server.requests;
    assert.is(r1?.url, '/v1/messages');
    assert.is(r1?.headers['x-api-key'], 'sk-ant-secret');
    assert.is(r1?.headers['anthropic-version'], '2023-06-01');
    assert.is(r1?.headers.authorization, undefined);
    assert.equal(r1?.body, {
      model: 'claude-test',
      max_tokens: ANTHROPIC_DEFAULT_MAX_TOKENS,
      system: 'Be brief.\n\nWorkspace: /ws',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Summarise src/a.ts' }] }],
      tools: [
        { name: 'read', description: 'Read a file', input_schema: tools[0]?.inputSchema },
        { name: 'ls', description: 'List a directory', input_schema: tools[1]?.inputSchema },
      ],
    });
    const body2 = r2?.body as { max_tokens: number; messages: unknown };
    assert.is(body2.max_tokens, 50);
    // Both results, and the user's text after them, travel in one user message, results first.
    assert.equal(body2.messages, [
      { role: 'user', content: [{ type: 'text', text: 'Summarise src/a.ts' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'src/a.ts' } },
          { type: 'tool_use', id: 'toolu_2', name: 'ls', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'export const a = 1;' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'a.ts' },
          { type: 'text', text: 'Keep it short.' },
        ],
      },
    ]);
  } finally {
    await server.close();
  }
});

test('stop reasons: max_tokens is length, a tool_use block without a name is a parseError', async () => {
  const server = await startScriptedServer([
    { body: { stop_reason: 'max_tokens', content: [{ type: 'text', text: 'cut' }] } },
    { body: { stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'toolu_9', input: {} }] } },
    { body: { stop_reason: 'refusal', content: [] } },
  ]);
  try {
    const provider = new AnthropicProvider({ apiKey: 'k', model: 'm', baseUrl: server.url });
    const req = { system: '', messages: [{ role: 'user' as const, content: 'go' }], tools: [] };
    assert.is((await provider.complete(req)).stopReason, 'length');
    const unnamed = await provider.complete(req);
    assert.is(unnamed.toolCalls[0]?.id, 'toolu_9');
    assert.match(unnamed.toolCalls[0]?.parseError ?? '', /no name/);
    assert.is((await provider.complete(req)).stopReason, 'other');
    // An empty system prompt and no tools: neither field is sent.
    assert.not.ok('system' in (server.requests[0]?.body as object));
    assert.not.ok('tools' in (server.requests[0]?.body as object));
  } finally {
    await server.close();
  }
});

test('config from the environment: key required, model defaulted, URL optional', () => {
  assert.is(anthropicConfigFromEnv({}), undefined);
  assert.equal(anthropicConfigFromEnv({ SUPERPI_ANTHROPIC_API_KEY: 'k' }), { apiKey: 'k', model: ANTHROPIC_DEFAULT_MODEL });
  assert.equal(anthropicConfigFromEnv({ SUPERPI_ANTHROPIC_API_KEY: 'k', SUPERPI_MODEL: 'claude-x', SUPERPI_ANTHROPIC_URL: 'http://proxy' }), {
    apiKey: 'k',
    model: 'claude-x',
    baseUrl: 'http://proxy',
  });
});

test.run();
