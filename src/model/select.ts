// Chooses the model behind harness_task: an endpoint configured explicitly or in the environment first,
// else the host's own model through MCP sampling, else an error that says how to configure one.

import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { ANTHROPIC_DEFAULT_MODEL, AnthropicProvider, anthropicConfigFromEnv, type AnthropicConfig } from './anthropic.ts';
import { OpenAICompatibleProvider, openAICompatibleConfigFromEnv, type OpenAICompatibleConfig } from './openai-compatible.ts';
import { SamplingProvider, type SampleFn, type SamplingOptions } from './sampling-convention.ts';
import { ModelError, type ModelProvider } from './types.ts';

/** The `provider` of the error thrown when no model is available. */
export const MODEL_SELECTION = 'model-selection';

export const NO_MODEL_CONFIGURED =
  'harness_task needs a model and none is configured. Either set SUPERPI_MODEL_URL to an OpenAI-compatible ' +
  'endpoint (e.g. https://api.openai.com/v1) with SUPERPI_MODEL (e.g. gpt-4o) and, if the endpoint needs a key, ' +
  `SUPERPI_API_KEY; or set SUPERPI_ANTHROPIC_API_KEY (SUPERPI_MODEL optional, default ${ANTHROPIC_DEFAULT_MODEL}); ` +
  'or connect from an MCP client that declares the "sampling" capability, so the task uses the host\'s model.';

export type ModelEndpointConfig =
  | ({ kind: 'openai-compatible' } & OpenAICompatibleConfig)
  | ({ kind: 'anthropic' } & AnthropicConfig);

export interface ModelSelectionInput {
  /** An endpoint configured explicitly (flags, a config file); it wins over the environment. */
  endpoint?: ModelEndpointConfig;
  /**
   * Read when there is no explicit endpoint: SUPERPI_MODEL_URL (+ SUPERPI_MODEL, SUPERPI_API_KEY) first,
   * then SUPERPI_ANTHROPIC_API_KEY (+ SUPERPI_MODEL, SUPERPI_ANTHROPIC_URL). Default `process.env`.
   */
  env?: NodeJS.ProcessEnv;
  /** The connection's client capabilities: `sampling` there means the host can lend its model. */
  clientCapabilities?: ClientCapabilities;
  /** Sends `sampling/createMessage` to that client; needed when it declared `sampling`. */
  sample?: SampleFn;
  samplingOptions?: SamplingOptions;
}

/**
 * The provider for a task, in this order: `endpoint`; SUPERPI_MODEL_URL; SUPERPI_ANTHROPIC_API_KEY; MCP
 * sampling when the client declared it. Throws a ModelError (provider MODEL_SELECTION, message
 * NO_MODEL_CONFIGURED) when none applies, and the env readers' ModelError for a half-configured endpoint.
 */
export function selectModelProvider(input: ModelSelectionInput = {}): ModelProvider {
  if (input.endpoint) return providerFor(input.endpoint);
  const env = input.env ?? process.env;
  const openAI = openAICompatibleConfigFromEnv(env);
  if (openAI) return new OpenAICompatibleProvider(openAI);
  const anthropic = anthropicConfigFromEnv(env);
  if (anthropic) return new AnthropicProvider(anthropic);
  if (input.clientCapabilities?.sampling) {
    // A wiring mistake, not a configuration one: the caller knows the client can sample but gave no way to.
    if (!input.sample) throw new TypeError('the client declared sampling but selectModelProvider was given no sample function');
    return new SamplingProvider(input.sample, input.samplingOptions);
  }
  throw new ModelError(MODEL_SELECTION, NO_MODEL_CONFIGURED);
}

function providerFor(endpoint: ModelEndpointConfig): ModelProvider {
  return endpoint.kind === 'anthropic' ? new AnthropicProvider(endpoint) : new OpenAICompatibleProvider(endpoint);
}
