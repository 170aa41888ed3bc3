// A ModelProvider for the Anthropic Messages API: maps the neutral conversation to `POST {baseUrl}/v1/messages`
// (top-level system, tool_use / tool_result blocks) and the answer back.

import { postJson, type RetryPolicy } from './http-retry.ts';
import { isJsonObject } from './json-object.ts';
import { ModelError, type ChatMessage, type ModelProvider, type ModelRequest, type ModelTurn, type ToolCall, type ToolSpec } from './types.ts';

export const ANTHROPIC_PROVIDER = 'anthropic';
export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
export const ANTHROPIC_API_VERSION = '2023-06-01';
/** Used when SUPERPI_MODEL is unset. */
export const ANTHROPIC_DEFAULT_MODEL = 'claude-sonnet-4-5';
/** The API requires `max_tokens`; this is sent when the request names none. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 8192;

export interface AnthropicConfig {
  apiKey: string;
  model: string;
  /** Default ANTHROPIC_DEFAULT_BASE_URL; requests go to `${baseUrl}/v1/messages` (a trailing slash is fine). */
  baseUrl?: string;
  /** Default ANTHROPIC_DEFAULT_MAX_TOKENS. */
  defaultMaxTokens?: number;
  /** Overrides of the request timeout and retry defaults (./http-retry.ts). */
  retry?: Partial<RetryPolicy>;
}

/**
 * From `SUPERPI_ANTHROPIC_API_KEY` (required: undefined without it), `SUPERPI_MODEL` (default
 * ANTHROPIC_DEFAULT_MODEL) and `SUPERPI_ANTHROPIC_URL` (default ANTHROPIC_DEFAULT_BASE_URL, for a proxy).
 */
export function anthropicConfigFromEnv(env: NodeJS.ProcessEnv = process.env): AnthropicConfig | undefined {
  const apiKey = env.SUPERPI_ANTHROPIC_API_KEY?.trim();
  if (!apiKey) return undefined;
  const model = env.SUPERPI_MODEL?.trim() || ANTHROPIC_DEFAULT_MODEL;
  const baseUrl = env.SUPERPI_ANTHROPIC_URL?.trim();
  return baseUrl ? { apiKey, model, baseUrl } : { apiKey, model };
}

type Block = Record<string, unknown> & { type: string };
interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

export class AnthropicProvider implements ModelProvider {
  readonly name = ANTHROPIC_PROVIDER;
  readonly #config: AnthropicConfig;
  readonly #url: string;

  constructor(config: AnthropicConfig) {
    this.#config = config;
    this.#url = `${(config.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL).replace(/\/+$/, '')}/v1/messages`;
  }

  async complete(req: ModelRequest): Promise<ModelTurn> {
    // The API has no system role inside the conversation: system messages join the top-level prompt.
    const system = [req.system, ...req.messages.filter((m) => m.role === 'system').map((m) => m.content)]
      .filter((s) => s !== '')
      .join('\n\n');
    const body: Record<string, unknown> = {
      model: this.#config.model,
      max_tokens: req.maxTokens ?? this.#config.defaultMaxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
      messages: toAnthropicMessages(req.messages),
    };
    if (system !== '') body.system = system;
    if (req.tools.length > 0) body.tools = req.tools.map(toAnthropicTool);
    const response = await postJson({
      provider: this.name,
      url: this.#url,
      headers: { 'x-api-key': this.#config.apiKey, 'anthropic-version': ANTHROPIC_API_VERSION },
      body,
      signal: req.signal,
      secrets: [this.#config.apiKey],
      policy: this.#config.retry,
      ...(req.admitRequest ? { admit: req.admitRequest } : {}),
    });
    return fromAnthropicResponse(this.name, response);
  }
}

function toAnthropicTool(tool: ToolSpec): Record<string, unknown> {
  return { name: tool.name, description: tool.description, input_schema: tool.inputSchema };
}

/**
 * Tool results become `tool_result` blocks of a user message. Consecutive messages of one role are merged
 * into one message (all results of a turn must arrive together, and tool_result blocks must come first
 * in it); empty text is dropped, since the API refuses empty text blocks.
 */
function toAnthropicMessages(messages: ChatMessage[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  for (const m of messages) {
    if (m.role === 'system') continue;
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const blocks = toBlocks(m);
    if (blocks.length === 0) continue;
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  }
  for (const m of out) if (m.role === 'user') m.content = toolResultsFirst(m.content);
  return out;
}

function toBlocks(m: ChatMessage): Block[] {
  if (m.role === 'tool') {
    const result: Block = { type: 'tool_result', tool_use_id: m.toolCallId ?? '' };
    if (m.content !== '') result.content = m.content;
    return [result];
  }
  const blocks: Block[] = m.content === '' ? [] : [{ type: 'text', text: m.content }];
  if (m.role === 'assistant') {
    for (const c of m.toolCalls ?? []) blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments });
  }
  return blocks;
}

function toolResultsFirst(blocks: Block[]): Block[] {
  return [...blocks.filter((b) => b.type === 'tool_result'), ...blocks.filter((b) => b.type !== 'tool_result')];
}

function fromAnthropicResponse(provider: string, response: unknown): ModelTurn {
  if (!isJsonObject(response) || !Array.isArray(response.content)) {
    throw new ModelError(provider, `the response has no content array: ${JSON.stringify(response).slice(0, 200)}`);
  }
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const block of response.content) {
    if (!isJsonObject(block)) continue;
    // Other block types (thinking, redacted_thinking, server tool blocks) are not part of the neutral turn.
    if (block.type === 'text' && typeof block.text === 'string') text += block.text;
    else if (block.type === 'tool_use') toolCalls.push(toToolCall(block, toolCalls.length));
  }
  return { text, toolCalls, stopReason: stopReason(response.stop_reason, toolCalls.length > 0) };
}

function toToolCall(block: Record<string, unknown>, index: number): ToolCall {
  const id = typeof block.id === 'string' && block.id !== '' ? block.id : `toolu-${index + 1}`;
  const name = typeof block.name === 'string' ? block.name : '';
  if (name === '') return { id, name, arguments: {}, parseError: 'the tool call has no name' };
  if (!isJsonObject(block.input)) return { id, name, arguments: {}, parseError: 'the tool input must be a JSON object' };
  return { id, name, arguments: block.input };
}

/** A cut-off turn reports 'length' even with tool calls, since the last one may be incomplete. */
function stopReason(reason: unknown, hasToolCalls: boolean): ModelTurn['stopReason'] {
  if (reason === 'max_tokens') return 'length';
  if (hasToolCalls) return 'tool_calls';
  return reason === 'end_turn' || reason === 'stop_sequence' ? 'end' : 'other';
}
