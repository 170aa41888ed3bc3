// The model through MCP sampling (`sampling/createMessage`, protocol 2025-06-18), which carries no tool
// definitions: tools are described in the system prompt and calls travel as `<tool_call>` text blocks.
//
// The convention, as the model is told it (describeToolsForSampling):
// - a tool call is one block `<tool_call>{"name": "read", "arguments": {"path": "src/a.ts"}}</tool_call>`,
//   one block per call, several allowed in one answer;
// - an answer without any block is the final answer;
// - each result comes back as user text `Tool result for <name> (<id>):\n<result>`;
// - the model's own earlier calls appear in the history as the same blocks, so it sees the form it must use.
// Parsing (parseSampledTurn) is lenient where models drift: whitespace and code fences around or inside the
// tags, tag case, a last block left unclosed. A block that still cannot be read becomes a ToolCall with
// `parseError`, which the loop sends back as that call's (error) result instead of running it.

import type { CreateMessageRequest, CreateMessageResult, ModelPreferences } from '@modelcontextprotocol/sdk/types.js';
import { isJsonObject } from './json-object.ts';
import { SAMPLED_TURN_REREAD_FACTOR } from '../limits.ts';
import { ModelError, type ChatMessage, type ModelProvider, type ModelRequest, type ModelTurn, type ToolCall, type ToolSpec } from './types.ts';

export const SAMPLING_PROVIDER = 'mcp-sampling';
export const TOOL_CALL_OPEN_TAG = '<tool_call>';
export const TOOL_CALL_CLOSE_TAG = '</tool_call>';
/** Sampled calls have no ids of their own: the N-th call of the conversation is `sampled-N`. */
export const SAMPLED_ID_PREFIX = 'sampled-';
/** The name given to a call whose block is too broken to show one. */
export const UNREADABLE_TOOL_NAME = 'invalid_tool_call';
/** `maxTokens` is required by sampling/createMessage; this is sent when the request names none. */
export const SAMPLING_DEFAULT_MAX_TOKENS = 8192;
/** Characters of a broken block quoted back to the model in its error. */
export const MAX_QUOTED_BLOCK_CHARS = 200;

/**
 * The system prompt appendix that teaches the convention and lists the tools (name, description, JSON
 * Schema). '' when there are no tools, so a tool-less task gets no instructions about tools.
 */
export function describeToolsForSampling(tools: ToolSpec[]): string {
  const first = tools[0];
  if (!first) return '';
  const example = renderToolCall({ name: first.name, arguments: exampleArguments(first.inputSchema) });
  const lines = [
    '# Tools',
    '',
    'You can use the tools listed below. Tool calls are written as text, in this exact form:',
    '',
    `${TOOL_CALL_OPEN_TAG}{"name": "<tool name>", "arguments": {<arguments>}}${TOOL_CALL_CLOSE_TAG}`,
    '',
    `For example: ${example}`,
    '',
    `- Between ${TOOL_CALL_OPEN_TAG} and ${TOOL_CALL_CLOSE_TAG} goes one JSON object: "name" is the name of a tool below and "arguments" is a JSON object that matches that tool's input schema.`,
    '- To call several tools at once, write one block per call. Then stop: do not guess the results.',
    '- The results come back in the next message, one per call, each starting "Tool result for <tool name> (<call id>):".',
    '- When you need no more tools, answer in plain text without any tool_call block: that answer is your final answer.',
  ];
  for (const tool of tools) {
    lines.push('', `## ${tool.name}`, '', tool.description, '', 'Input schema:', '```json', JSON.stringify(tool.inputSchema, null, 2), '```');
  }
  return lines.join('\n');
}

/** One call as the convention writes it; also how the model's earlier calls appear in the history. */
export function renderToolCall(call: Pick<ToolCall, 'name' | 'arguments'>): string {
  return `${TOOL_CALL_OPEN_TAG}${JSON.stringify({ name: call.name, arguments: call.arguments })}${TOOL_CALL_CLOSE_TAG}`;
}

/**
 * Reads a sampled answer: every `<tool_call>` block becomes a ToolCall (ids `sampled-<firstId>`,
 * `sampled-<firstId + 1>`, … in order; firstId defaults to 1), the rest of the text is `text`. No block:
 * the text is the final answer (stopReason 'end'); any block: stopReason 'tool_calls'.
 */
export function parseSampledTurn(text: string, options: { firstId?: number } = {}): ModelTurn {
  const firstId = options.firstId ?? 1;
  const toolCalls: ToolCall[] = [];
  const rest: string[] = [];
  // Every tag found once, so each block's search is a step along these lists, not a scan of the text again.
  const opens = tagPositions(text, TOOL_CALL_OPEN_TAG);
  const closes = tagPositions(text, TOOL_CALL_CLOSE_TAG);
  // Characters a turn may read again past a block's first closing tag (see below): a few times the text, so a
  // turn of many unreadable blocks, each followed by every later closing tag, costs time linear in its length.
  let rereads = SAMPLED_TURN_REREAD_FACTOR * text.length;
  let pos = 0;
  let nextOpen = 0;
  let nextClose = 0;
  for (;;) {
    while (nextOpen < opens.length && (opens[nextOpen] as number) < pos) nextOpen++;
    const open = opens[nextOpen];
    if (open === undefined) break;
    rest.push(text.slice(pos, open));
    const bodyStart = open + TOOL_CALL_OPEN_TAG.length;
    while (nextClose < closes.length && (closes[nextClose] as number) < bodyStart) nextClose++;
    const id = `${SAMPLED_ID_PREFIX}${firstId + toolCalls.length}`;
    const ordinal = toolCalls.length + 1;
    let close = closes[nextClose] ?? -1;
    let call = readBlock(text.slice(bodyStart, close === -1 ? text.length : close), id, ordinal, close !== -1);
    // The arguments may themselves contain the closing tag (a file written about this convention): when
    // the block does not parse, a later closing tag that makes it parse is the real end.
    for (let later = nextClose + 1; call.parseError !== undefined && close !== -1 && later < closes.length; later++) {
      const end = closes[later] as number;
      rereads -= end - bodyStart;
      if (rereads < 0) break;
      const extended = readBlock(text.slice(bodyStart, end), id, ordinal, true);
      if (extended.parseError === undefined) [call, close] = [extended, end];
    }
    toolCalls.push(call);
    pos = close === -1 ? text.length : close + TOOL_CALL_CLOSE_TAG.length;
  }
  rest.push(text.slice(pos));
  const remaining = toolCalls.length === 0 ? text.trim() : tidyAroundBlocks(rest.join('\n'));
  return { text: remaining, toolCalls, stopReason: toolCalls.length > 0 ? 'tool_calls' : 'end' };
}

export interface SamplingOptions {
  /** Sent when the request names none; default SAMPLING_DEFAULT_MAX_TOKENS. */
  maxTokens?: number;
  /** Passed on to the client, which chooses the model. */
  modelPreferences?: ModelPreferences;
}

/**
 * The `sampling/createMessage` params for a request: the system prompt with the tools appendix, the
 * conversation as user/assistant text (tool results as user text `Tool result for <name> (<id>):\n…`,
 * earlier calls as their blocks). Consecutive messages of one role are joined into one, since hosts pass
 * them to APIs that want the roles to alternate.
 */
export function toSamplingRequest(req: Omit<ModelRequest, 'signal'>, options: SamplingOptions = {}): CreateMessageRequest['params'] {
  const systemPrompt = [req.system, ...req.messages.filter((m) => m.role === 'system').map((m) => m.content), describeToolsForSampling(req.tools)]
    .filter((s) => s !== '')
    .join('\n\n');
  const messages: { role: 'user' | 'assistant'; text: string }[] = [];
  req.messages.forEach((m, index) => {
    if (m.role === 'system') return;
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const text = renderMessage(m, req.messages, index);
    if (text === '') return;
    const last = messages[messages.length - 1];
    if (last && last.role === role) last.text += `\n\n${text}`;
    else messages.push({ role, text });
  });
  const params: CreateMessageRequest['params'] = {
    messages: messages.map((m) => ({ role: m.role, content: { type: 'text', text: m.text } })),
    maxTokens: req.maxTokens ?? options.maxTokens ?? SAMPLING_DEFAULT_MAX_TOKENS,
  };
  if (systemPrompt !== '') params.systemPrompt = systemPrompt;
  if (options.modelPreferences) params.modelPreferences = options.modelPreferences;
  return params;
}

/** The MCP side, injected: sends `sampling/createMessage` to the client and resolves with its result. */
export type SampleFn = (params: CreateMessageRequest['params'], options: { signal?: AbortSignal }) => Promise<CreateMessageResult>;

export class SamplingProvider implements ModelProvider {
  readonly name = SAMPLING_PROVIDER;
  readonly #sample: SampleFn;
  readonly #options: SamplingOptions;

  constructor(sample: SampleFn, options: SamplingOptions = {}) {
    this.#sample = sample;
    this.#options = options;
  }

  async complete(req: ModelRequest): Promise<ModelTurn> {
    if (req.signal?.aborted) throw new ModelError(this.name, 'request aborted by the caller', { cause: req.signal.reason });
    const params = toSamplingRequest(req, this.#options);
    let result: CreateMessageResult;
    try {
      result = await untilAborted(this.#sample(params, { signal: req.signal }), req.signal);
    } catch (err) {
      if (req.signal?.aborted) throw new ModelError(this.name, 'request aborted by the caller', { cause: req.signal.reason });
      const reason = err instanceof Error ? err.message : String(err);
      throw new ModelError(this.name, `the client's sampling/createMessage failed: ${reason}`, { cause: err });
    }
    const text = textOf(result.content);
    if (text === undefined) {
      throw new ModelError(this.name, `the client answered with ${describeContent(result.content)}; the task needs a text answer`);
    }
    // Ids continue across the conversation, so a result never names a call of an earlier turn.
    const firstId = 1 + req.messages.reduce((n, m) => n + (m.role === 'assistant' ? (m.toolCalls?.length ?? 0) : 0), 0);
    const turn = parseSampledTurn(text, { firstId });
    return { ...turn, stopReason: samplingStopReason(result.stopReason, turn) };
  }
}

function samplingStopReason(reason: CreateMessageResult['stopReason'], turn: ModelTurn): ModelTurn['stopReason'] {
  if (reason === 'maxTokens') return 'length';
  if (turn.toolCalls.length > 0) return 'tool_calls';
  return reason === undefined || reason === 'endTurn' || reason === 'stopSequence' ? 'end' : 'other';
}

function renderMessage(m: ChatMessage, all: ChatMessage[], index: number): string {
  if (m.role === 'tool') return `Tool result for ${toolNameOf(m.toolCallId, all, index)} (${m.toolCallId ?? 'no id'}):\n${m.content}`;
  if (m.role === 'assistant') return [m.content, ...(m.toolCalls ?? []).map(renderToolCall)].filter((s) => s !== '').join('\n');
  return m.content;
}

/** The name of the call a tool message answers: the nearest earlier assistant call with that id. */
function toolNameOf(id: string | undefined, all: ChatMessage[], before: number): string {
  for (let i = before - 1; i >= 0; i--) {
    const call = all[i]?.toolCalls?.find((c) => c.id === id);
    if (call) return call.name;
  }
  return 'an unknown tool';
}

function readBlock(body: string, id: string, ordinal: number, closed: boolean): ToolCall {
  const json = stripFence(body.trim());
  const fail = (reason: string, name = UNREADABLE_TOOL_NAME): ToolCall => {
    const quoted = json.length > MAX_QUOTED_BLOCK_CHARS ? `${json.slice(0, MAX_QUOTED_BLOCK_CHARS)}…` : json;
    const parseError =
      `Tool call ${ordinal} could not be read: ${reason}${closed ? '' : ` (the block has no ${TOOL_CALL_CLOSE_TAG})`}. ` +
      `You wrote: ${quoted}\nWrite each call as ${TOOL_CALL_OPEN_TAG}{"name": "<tool name>", "arguments": {…}}${TOOL_CALL_CLOSE_TAG} with valid JSON, and make it again.`;
    return { id, name, arguments: {}, parseError };
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (err) {
    return fail(`its content is not valid JSON (${err instanceof Error ? err.message : String(err)})`, recoverName(json));
  }
  if (!isJsonObject(parsed) || typeof parsed.name !== 'string' || parsed.name.trim() === '') {
    return fail('it must be a JSON object with a string "name"');
  }
  const name = parsed.name.trim();
  const args = decodeArguments(parsed.arguments);
  return args ? { id, name, arguments: args } : fail('"arguments" must be a JSON object', name);
}

/** Absent means none; a JSON string holding an object (as OpenAI-trained models write it) is accepted. */
function decodeArguments(raw: unknown): Record<string, unknown> | undefined {
  if (raw === undefined || raw === null) return {};
  if (isJsonObject(raw)) return raw;
  if (typeof raw !== 'string') return undefined;
  try {
    const inner: unknown = JSON.parse(raw);
    return isJsonObject(inner) ? inner : undefined;
  } catch {
    // A string that is not a JSON object is simply not valid arguments; the caller reports that.
    return undefined;
  }
}

/** The tool's name out of a block that is not JSON, so the error names the call the model meant. */
function recoverName(json: string): string {
  return /"name"\s*:\s*"([^"\\]{1,100})"/.exec(json)?.[1]?.trim() || UNREADABLE_TOOL_NAME;
}

/**
 * A fenced block (```json … ```) inside the tags: what lies between the fences, its language word dropped.
 * No regex over the body: a pattern with a lazy middle between runs of blanks backtracks cubically (a 20 KB
 * body of blanks held the thread for minutes).
 */
export function stripFence(body: string): string {
  const FENCE = '```';
  if (body.length < 2 * FENCE.length || !body.startsWith(FENCE) || !body.endsWith(FENCE)) return body;
  let start = FENCE.length;
  while (start < body.length - FENCE.length && /[\w-]/.test(body.charAt(start))) start++;
  return body.slice(start, body.length - FENCE.length).trim();
}

/** The text beside the blocks, without the empty fences that wrapped them. */
function tidyAroundBlocks(text: string): string {
  return text
    .replace(/```[\w-]*\s*```/g, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Where `tag` starts in `text`, each place in order, case-insensitive (a regex rather than toLowerCase(), which can change the length of the text). */
function tagPositions(text: string, tag: string): number[] {
  const positions: number[] = [];
  for (const match of text.matchAll(new RegExp(tag, 'gi'))) positions.push(match.index);
  return positions;
}

function textOf(content: unknown): string | undefined {
  if (isJsonObject(content)) return content.type === 'text' && typeof content.text === 'string' ? content.text : undefined;
  // A client answering with several blocks (a newer protocol's shape): the text blocks, in order.
  if (!Array.isArray(content)) return undefined;
  const texts = content.filter((b): b is { type: 'text'; text: string } => isJsonObject(b) && b.type === 'text' && typeof b.text === 'string');
  return texts.length === 0 ? undefined : texts.map((b) => b.text).join('');
}

function describeContent(content: unknown): string {
  return isJsonObject(content) && typeof content.type === 'string' ? `${content.type} content` : 'no text content';
}

/** Rejects as soon as `signal` aborts, even when the injected `sample` ignores its signal. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    // Settles the race either way; a late rejection of abandoned work is then handled, not unhandled.
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
    if (signal.aborted) onAbort();
  });
}

/** Placeholder values for the required properties of a schema, so the example call looks like a real one. */
function exampleArguments(schema: object): Record<string, unknown> {
  const s: Record<string, unknown> = isJsonObject(schema) ? schema : {};
  const properties = isJsonObject(s.properties) ? s.properties : {};
  const required = Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === 'string') : [];
  const out: Record<string, unknown> = {};
  for (const key of required) {
    const prop = properties[key];
    const type = isJsonObject(prop) ? prop.type : undefined;
    out[key] = type === 'number' || type === 'integer' ? 1 : type === 'boolean' ? true : type === 'array' ? [] : type === 'object' ? {} : '...';
  }
  return out;
}
