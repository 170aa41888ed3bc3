import type { CreateMessageResult } from '@modelcontextprotocol/sdk/types.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AnthropicProvider } from '../../src/model/anthropic.ts';
import { OpenAICompatibleProvider } from '../../src/model/openai-compatible.ts';
import { SamplingProvider, type SampleFn } from '../../src/model/sampling-convention.ts';
import { MODEL_SELECTION, NO_MODEL_CONFIGURED, selectModelProvider } from '../../src/model/select.ts';
import { ModelError } from '../../src/model/types.ts';

const sample: SampleFn = async (): Promise<CreateMessageResult> => ({ model: 'm', role: 'assistant', content: { type: 'text', text: 'hi' } });
const sampling = { clientCapabilities: { sampling: {} }, sample };
const openAIEnv = { SUPERPI_MODEL_URL: 'http://127.0.0.1:1/v1', SUPERPI_MODEL: 'm' };
const anthropicEnv = { SUPERPI_ANTHROPIC_API_KEY: 'sk-ant' };

test('an explicit endpoint wins over the environment and sampling', () => {
  const p = selectModelProvider({ endpoint: { kind: 'anthropic', apiKey: 'k', model: 'm' }, env: openAIEnv, ...sampling });
  assert.instance(p, AnthropicProvider);
  const q = selectModelProvider({ endpoint: { kind: 'openai-compatible', baseUrl: 'http://x', model: 'm' }, env: anthropicEnv });
  assert.instance(q, OpenAICompatibleProvider);
});

test('the environment wins over sampling: SUPERPI_MODEL_URL first, then SUPERPI_ANTHROPIC_API_KEY', () => {
  assert.instance(selectModelProvider({ env: { ...openAIEnv, ...anthropicEnv }, ...sampling }), OpenAICompatibleProvider);
  assert.instance(selectModelProvider({ env: anthropicEnv, ...sampling }), AnthropicProvider);
});

test('sampling when nothing is configured and the client declared it', () => {
  const p = selectModelProvider({ env: {}, ...sampling });
  assert.instance(p, SamplingProvider);
  assert.is(p.name, 'mcp-sampling');
});

test('nothing configured and no sampling: a ModelError that names the environment variables', () => {
  const err = (() => {
    try {
      selectModelProvider({ env: {}, clientCapabilities: { elicitation: {} }, sample });
    } catch (e) {
      return e;
    }
    return undefined;
  })();
  assert.instance(err, ModelError);
  assert.is((err as ModelError).provider, MODEL_SELECTION);
  assert.is((err as ModelError).message, `${MODEL_SELECTION}: ${NO_MODEL_CONFIGURED}`);
  for (const name of ['SUPERPI_MODEL_URL', 'SUPERPI_MODEL', 'SUPERPI_API_KEY', 'SUPERPI_ANTHROPIC_API_KEY', 'sampling']) {
    assert.ok(NO_MODEL_CONFIGURED.includes(name), name);
  }
});

test('a half-configured endpoint is reported, not skipped in favour of sampling', () => {
  assert.throws(() => selectModelProvider({ env: { SUPERPI_MODEL_URL: 'http://x/v1' }, ...sampling }), /SUPERPI_MODEL is not/);
});

test('sampling declared without a sample function is a wiring error', () => {
  assert.throws(() => selectModelProvider({ env: {}, clientCapabilities: { sampling: {} } }), /no sample function/);
});

test.run();
