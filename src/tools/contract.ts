// The contract between the protocol core and the tool bodies: what a tool gets, what it returns.
// Tool bodies do I/O; the catalog (./catalog.ts) is pure data the protocol core can import.

import type { HarnessId } from '../harness/ids.ts';
import type { Clock } from '../time/clock.ts';
import type { ToolName } from './definition.ts';
import { TOOL_ERROR_MAX_CHARS } from '../limits.ts';

export interface ToolProgress {
  progress: number;
  total?: number;
  message?: string;
}

export interface ToolContext {
  /** Absolute, realpath-resolved workspace root. Every path a tool touches resolves inside it. */
  readonly workspace: string;
  /** Aborted when the call is cancelled or passes its deadline; a tool stops its work promptly. */
  readonly signal: AbortSignal;
  /** Reports progress on long work; the core forwards it when the caller sent a progressToken. */
  readonly onProgress?: (progress: ToolProgress) => void;
  /** What the tool's own waits (bash's timeout) are timed by; default `systemClock`. Never crosses to a pool thread. */
  readonly clock?: Clock;
}

/** An MCP image content block (every protocol version super-pi speaks has it): base64 bytes and their type. */
export interface ImageBlock {
  readonly type: 'image';
  readonly data: string;
  readonly mimeType: string;
}

/**
 * What a tool returns: `text` always (content[0]), `content` blocks after it (read's image), `structured`
 * where the tool declares an outputSchema. A harness task's model gets `text` only.
 */
export interface ToolOutcome {
  readonly text: string;
  readonly content?: readonly ImageBlock[];
  readonly structured?: Record<string, unknown>;
  readonly isError?: boolean;
}

/**
 * A failure the model should read (bad path, no match, refused escape): becomes `isError: true`. Its message
 * is at most TOOL_ERROR_MAX_CHARS (cut here, saying so): messages quote arguments, which may be megabytes.
 */
export class ToolError extends Error {
  override readonly name = 'ToolError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(boundedMessage(message), options);
  }
}

function boundedMessage(message: string): string {
  if (message.length <= TOOL_ERROR_MAX_CHARS) return message;
  let end = TOOL_ERROR_MAX_CHARS;
  const last = message.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${message.slice(0, end)}… [message cut: ${message.length} characters, TOOL_ERROR_MAX_CHARS is ${TOOL_ERROR_MAX_CHARS}]`;
}

export type ToolBody<A> = (args: A, ctx: ToolContext) => Promise<ToolOutcome>;

/** Runs one tool call for a harness: in this thread (tool-runner.ts) or on the tool pool (tool-pool.ts). */
export type ToolExecutor = (tool: ToolName, args: Record<string, unknown>, harness: HarnessId, ctx: ToolContext) => Promise<ToolOutcome>;
