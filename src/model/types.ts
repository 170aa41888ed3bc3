// The provider-neutral contract between the harness_task agent loop and a language model: the conversation
// format, the tool specs, one model turn, and the error every provider throws.

/** One tool call the model asked for. */
export interface ToolCall {
  /** The provider's id (OpenAI `call_…`, Anthropic `toolu_…`, sampling `sampled-N`); tool results refer to it. */
  id: string;
  name: string;
  /** Always an object: `{}` when the model sent none, or sent arguments that could not be parsed. */
  arguments: Record<string, unknown>;
  /**
   * Set when the model's call could not be parsed (arguments that are not a JSON object, a sampled
   * `<tool_call>` block that is not valid JSON). The loop must not run such a call: it answers it with a
   * tool result carrying this text as an error, so the model can correct itself on its next turn.
   */
  parseError?: string;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** role 'assistant' only: the calls this turn made, in order. */
  toolCalls?: ToolCall[];
  /** role 'tool' only: the `ToolCall.id` this message answers. */
  toolCallId?: string;
}

/** A tool as the model sees it; `inputSchema` is the tool's JSON Schema. */
export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: object;
}

/** What one model call produced. */
export interface ModelTurn {
  text: string;
  toolCalls: ToolCall[];
  /**
   * 'length' when the token limit cut the answer (a tool call in it may be incomplete: its `parseError` says
   * so when its arguments did not parse), else 'tool_calls' whenever `toolCalls` is non-empty. The loop runs
   * `toolCalls` whenever there are any, whatever the reason.
   */
  stopReason: 'end' | 'tool_calls' | 'length' | 'other';
}

export interface ModelRequest {
  system: string;
  /**
   * The conversation so far. A 'system' message here is folded into the system prompt by providers whose
   * API has no system role inside the conversation (Anthropic, MCP sampling).
   */
  messages: ChatMessage[];
  tools: ToolSpec[];
  /** Output token limit; each provider has a named default where its API requires one. */
  maxTokens?: number;
  /** Aborting it stops the request (and any retry wait) promptly with a ModelError. */
  signal?: AbortSignal;
  /**
   * Awaited before every request sent to a model endpoint, retries included: the caller's budget of
   * model calls (it may wait, and rejects when the signal aborts). Sampling asks the host's own model
   * and does not call it.
   */
  admitRequest?: (signal: AbortSignal) => Promise<void>;
}

export interface ModelProvider {
  /** 'openai-compatible', 'anthropic' or 'mcp-sampling': error messages and logs name it. */
  readonly name: string;
  complete(req: ModelRequest): Promise<ModelTurn>;
}

/**
 * Every failure of a model call. The message reads `<provider>: HTTP <status>: <detail>` (or
 * `<provider>: <detail>` without a status) and never contains an API key.
 */
export class ModelError extends Error {
  override readonly name = 'ModelError';
  readonly provider: string;
  readonly status?: number;
  /** True when the same request may succeed later (429, 5xx, network failure, timeout). */
  readonly retryable: boolean;

  constructor(provider: string, detail: string, options: { status?: number; retryable?: boolean; cause?: unknown } = {}) {
    super(`${provider}: ${options.status === undefined ? '' : `HTTP ${options.status}: `}${detail}`, { cause: options.cause });
    this.provider = provider;
    if (options.status !== undefined) this.status = options.status;
    this.retryable = options.retryable ?? false;
  }
}
