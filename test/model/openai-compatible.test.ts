import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OpenAICompatibleProvider, openAICompatibleConfigFromEnv } from '../../src/model/openai-compatible.ts';
import { ModelError, type ChatMessage, type ToolSpec } from '../../src/model/types.ts';
import { startScriptedServer } from './fixtures/scripted-server.ts';

const readTool: ToolSpec = {
  name: 'read',
  description: 'Read a file',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

test('a tool call, then a final answer: the request bodies carry tools, messages and the call id round trip', async () => {
  const server = await startScriptedServer([
    {
      body: {
        choices: [
          {
            finish_reason: 'tool_calls',
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'read', arguments: '{"path":"src/a.ts"}' } }],
            },
          },
        ],
      },
    },
    { body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: 'It exports one function.' } }] } },
  ]);
  try {
    // The trailing slash must not give `//chat/completions`.
    const provider = new OpenAICompatibleProvider({ baseUrl: `${server.url}/v1/`, model: 'test-model', apiKey: 'sk-test-123' });
    const messages: ChatMessage[] = [{ role: 'user', content: 'What does src/a.ts export?' }];
    const first = await provider.complete({ system: 'You are terse.', messages, tools: [readTool], maxTokens: 100 });
    assert.equal(first, { text: '', toolCalls: [{ id: 'call_abc', name: 'read', arguments: { path: 'src/a.ts' } }], stopReason: 'tool_calls' });

    messages.push({ role: 'assistant', content: first.text, toolCalls: first.toolCalls });
    messages.push({ role: 'tool', toolCallId: 'call_abc', content: 'export function a() {}' });
    const second = await provider.complete({ system: 'You are terse.', messages, tools: [readTool] });
    assert.equal(second, { text: 'It exports one function.', toolCalls: [], stopReason: 'end' });

    assert.is(server.requests.length, 2);
    const [r1, r2] = server.requests;
    assert.is(r1?.method, 'POST');
    assert.is(r1?.url, '/v1/chat/completions');
    assert.is(r1?.headers.authorization, 'Bearer sk-test-123');
    assert.equal(r1?.body, {
      model: 'test-model',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'What does src/a.ts export?' },
      ],
      tools: [{ type: 'function', function: { name: 'read', description: 'Read a file', parameters: readTool.inputSchema } }],
      max_tokens: 100,
    });
    assert.equal(r2?.body, {
      model: 'test-model',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'What does src/a.ts export?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'read', arguments: '{"path":"src/a.ts"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_abc', content: 'export function a() {}' },
      ],
      tools: [{ type: 'function', function: { name: 'read', description: 'Read a file', parameters: readTool.inputSchema } }],
    });
  } finally {
    await server.close();
  }
});

test('malformed arguments give a call with {} and a parseError, not a failed turn', async () => {
  const server = await startScriptedServer([
    {
      body: {
        choices: [
          {
            finish_reason: 'tool_calls',
            message: {
              content: 'Reading.',
              tool_calls: [
                { id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path": "src/a.ts"' } },
                { id: 'call_2', type: 'function', function: { name: 'ls', arguments: '' } },
                { id: 'call_3', type: 'function', function: { name: 'read', arguments: '["src/a.ts"]' } },
              ],
            },
          },
        ],
      },
    },
  ]);
  try {
    const provider = new OpenAICompatibleProvider({ baseUrl: server.url, model: 'm' });
    const turn = await provider.complete({ system: '', messages: [{ role: 'user', content: 'go' }], tools: [readTool] });
    assert.is(turn.text, 'Reading.');
    assert.is(turn.stopReason, 'tool_calls');
    const [bad, empty, notObject] = turn.toolCalls;
    assert.equal(bad?.arguments, {});
    assert.match(bad?.parseError ?? '', /not valid JSON/);
    assert.equal(empty, { id: 'call_2', name: 'ls', arguments: {} });
    assert.match(notObject?.parseError ?? '', /must be a JSON object/);
    // No key configured: no Authorization header; an empty system prompt sends no system message.
    assert.is(server.requests[0]?.headers.authorization, undefined);
    assert.equal((server.requests[0]?.body as { messages: unknown }).messages, [{ role: 'user', content: 'go' }]);
  } finally {
    await server.close();
  }
});

test('finish_reason stop with tool calls still reports tool_calls; length wins', async () => {
  const call = { id: 'c', type: 'function', function: { name: 'ls', arguments: '{}' } };
  const server = await startScriptedServer([
    { body: { choices: [{ finish_reason: 'stop', message: { content: '', tool_calls: [call] } }] } },
    { body: { choices: [{ finish_reason: 'length', message: { content: 'cut', tool_calls: [call] } }] } },
  ]);
  try {
    const provider = new OpenAICompatibleProvider({ baseUrl: server.url, model: 'm' });
    const req = { system: '', messages: [{ role: 'user' as const, content: 'go' }], tools: [] };
    assert.is((await provider.complete(req)).stopReason, 'tool_calls');
    assert.is((await provider.complete(req)).stopReason, 'length');
    assert.not.ok('tools' in (server.requests[0]?.body as object), 'no tools: no tools field');
  } finally {
    await server.close();
  }
});

test('a response without choices is a ModelError naming the provider', async () => {
  const server = await startScriptedServer([{ body: { object: 'nothing' } }]);
  try {
    const provider = new OpenAICompatibleProvider({ baseUrl: server.url, model: 'm' });
    const err = await provider.complete({ system: '', messages: [], tools: [] }).catch((e: unknown) => e);
    assert.instance(err, ModelError);
    assert.match((err as ModelError).message, /^openai-compatible: .*choices/);
  } finally {
    await server.close();
  }
});

test('config from the environment: URL, model and key; none without SUPERPI_MODEL_URL; a URL without a model is an error', () => {
  assert.equal(openAICompatibleConfigFromEnv({ SUPERPI_MODEL_URL: 'http://x/v1', SUPERPI_MODEL: 'm', SUPERPI_API_KEY: 'k' }), {
    baseUrl: 'http://x/v1',
    model: 'm',
    apiKey: 'k',
  });
  assert.equal(openAICompatibleConfigFromEnv({ SUPERPI_MODEL_URL: 'http://x/v1', SUPERPI_MODEL: 'm' }), { baseUrl: 'http://x/v1', model: 'm' });
  assert.is(openAICompatibleConfigFromEnv({ SUPERPI_MODEL: 'm' }), undefined);
  assert.throws(() => openAICompatibleConfigFromEnv({ SUPERPI_MODEL_URL: 'http://x/v1' }), /SUPERPI_MODEL is not/);
});

test.run();
