// A ModelProvider for any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp,
// OpenRouter…): maps the neutral conversation to `POST {baseUrl}/chat/completions` with tools, and back.

import { postJson, type RetryPolicy } from './http-retry.ts';
import { isJsonObject } from './json-object.ts';
import { ModelError, type ChatMessage, type ModelProvider, type ModelRequest, type ModelTurn, type ToolCall, type ToolSpec } from './types.ts';

export const OPENAI_COMPATIBLE_PROVIDER = 'openai-compatible';

export interface OpenAICompatibleConfig {
  /** e.g. `https://api.openai.com/v1`; requests go to `${baseUrl}/chat/completions` (a trailing slash is fine). */
  baseUrl: string;
  model: string;
  /** Sent as `Authorization: Bearer …`; local servers often need none. */
  apiKey?: string;
  /**
   * The request field for `maxTokens`. `max_tokens` (the default) is what compatible servers read; OpenAI's
   * reasoning models accept only `max_completion_tokens`.
   */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /** Overrides of the request timeout and retry defaults (./http-retry.ts). */
  retry?: Partial<RetryPolicy>;
}

/**
 * The endpoint named by `SUPERPI_MODEL_URL` (with `SUPERPI_MODEL`, and `SUPERPI_API_KEY` when the server
 * wants one), or undefined when `SUPERPI_MODEL_URL` is unset. A URL without a model is a configuration
 * mistake, reported rather than ignored.
 */
export function openAICompatibleConfigFromEnv(env: NodeJS.ProcessEnv = process.env): OpenAICompatibleConfig | undefined {
  const baseUrl = env.SUPERPI_MODEL_URL?.trim();
  if (!baseUrl) return undefined;
  const model = env.SUPERPI_MODEL?.trim();
  if (!model) {
    throw new ModelError(OPENAI_COMPATIBLE_PROVIDER, 'SUPERPI_MODEL_URL is set but SUPERPI_MODEL is not: set SUPERPI_MODEL to the model name (e.g. gpt-4o)');
  }
  const apiKey = env.SUPERPI_API_KEY?.trim();
  return apiKey ? { baseUrl, model, apiKey } : { baseUrl, model };
}

export class OpenAICompatibleProvider implements ModelProvider {
  readonly name = OPENAI_COMPATIBLE_PROVIDER;
  readonly #config: OpenAICompatibleConfig;
  readonly #url: string;

  constructor(config: OpenAICompatibleConfig) {
    this.#config = config;
    this.#url = `${config.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  }

  async complete(req: ModelRequest): Promise<ModelTurn> {
    const body: Record<string, unknown> = {
      model: this.#config.model,
      messages: toOpenAIMessages(req.system, req.messages),
    };
    // Some compatible servers reject an empty `tools` array, so a tool-less request has none.
    if (req.tools.length > 0) body.tools = req.tools.map(toOpenAITool);
    if (req.maxTokens !== undefined) body[this.#config.maxTokensField ?? 'max_tokens'] = req.maxTokens;
    const apiKey = this.#config.apiKey;
    const response = await postJson({
      provider: this.name,
      url: this.#url,
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      body,
      signal: req.signal,
      secrets: apiKey ? [apiKey] : [],
      policy: this.#config.retry,
      ...(req.admitRequest ? { admit: req.admitRequest } : {}),
    });
    return fromOpenAIResponse(this.name, response);
  }
}

function toOpenAITool(tool: ToolSpec): Record<string, unknown> {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.inputSchema } };
}

function toOpenAIMessages(system: string, messages: ChatMessage[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = system === '' ? [] : [{ role: 'system', content: system }];
  for (const m of messages) {
    switch (m.role) {
      case 'system':
      case 'user':
        out.push({ role: m.role, content: m.content });
        break;
      case 'tool':
        out.push({ role: 'tool', tool_call_id: m.toolCallId ?? '', content: m.content });
        break;
      case 'assistant': {
        const calls = m.toolCalls ?? [];
        if (calls.length === 0) {
          out.push({ role: 'assistant', content: m.content });
          break;
        }
        out.push({
          role: 'assistant',
          // The API wants null, not '', beside tool calls when the model said nothing.
          content: m.content === '' ? null : m.content,
          tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })),
        });
        break;
      }
    }
  }
  return out;
}

function fromOpenAIResponse(provider: string, response: unknown): ModelTurn {
  const choice = isJsonObject(response) && Array.isArray(response.choices) ? response.choices[0] : undefined;
  const message = isJsonObject(choice) ? choice.message : undefined;
  if (!isJsonObject(choice) || !isJsonObject(message)) {
    throw new ModelError(provider, `the response has no choices[0].message: ${JSON.stringify(response).slice(0, 200)}`);
  }
  const text = typeof message.content === 'string' ? message.content : '';
  const rawCalls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  const toolCalls = rawCalls.map((raw, i) => toToolCall(raw, i));
  return { text, toolCalls, stopReason: stopReason(choice.finish_reason, toolCalls.length > 0) };
}

/**
 * A cut-off turn reports 'length' even with tool calls, since the last one may be incomplete. Otherwise the
 * calls decide: some servers (Ollama, older llama.cpp) answer `stop` even when they called tools.
 */
function stopReason(reason: unknown, hasToolCalls: boolean): ModelTurn['stopReason'] {
  if (reason === 'length') return 'length';
  if (hasToolCalls) return 'tool_calls';
  switch (reason) {
    case 'stop':
      return 'end';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'length':
      return 'length';
    default:
      return 'other';
  }
}

/**
 * Malformed arguments do not fail the turn: the call comes back with `arguments: {}` and `parseError` set,
 * and the loop answers it with that error as the tool result, so the model can retry the call.
 */
function toToolCall(raw: unknown, index: number): ToolCall {
  const fn = isJsonObject(raw) && isJsonObject(raw.function) ? raw.function : {};
  // An id is needed to pair the result with the call; a server that omits it gets a stable one.
  const id = isJsonObject(raw) && typeof raw.id === 'string' && raw.id !== '' ? raw.id : `call-${index + 1}`;
  const name = typeof fn.name === 'string' ? fn.name : '';
  const args = parseToolArguments(fn.arguments);
  if (name === '') return { id, name, arguments: {}, parseError: 'the tool call has no function name' };
  return 'error' in args ? { id, name, arguments: {}, parseError: args.error } : { id, name, arguments: args.value };
}

/** OpenAI sends arguments as a JSON string; '' means none; a few servers send the object itself. */
function parseToolArguments(raw: unknown): { value: Record<string, unknown> } | { error: string } {
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) return { value: {} };
  if (isJsonObject(raw)) return { value: raw };
  if (typeof raw !== 'string') return { error: `the arguments must be a JSON object, got ${typeof raw}` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return { error: `the arguments are not valid JSON (${reason}): ${raw.slice(0, 200)}` };
  }
  return isJsonObject(parsed) ? { value: parsed } : { error: `the arguments must be a JSON object, got ${raw.slice(0, 200)}` };
}
