// The messages of a Streamable HTTP POST body, read before any session sees them: a batch too long or
// too deep, or any message the core could only answer with id null, refuses the whole POST with a 400.

import { readParsed } from '../mcp/frame.ts';
import { type Classified, ErrorCode, errorLine } from '../mcp/jsonrpc.ts';
import { nestsDeeperThan } from '../mcp/limits.ts';
import { MAX_BATCH_LENGTH, MAX_JSON_DEPTH } from '../limits.ts';

/**
 * The messages of a POST body, each classified as the core classifies it, or the 400 body that refuses
 * the whole POST. A POST must be one JSON-RPC object or a non-empty batch of at most MAX_BATCH_LENGTH
 * objects, every one of them a valid message: whatever the core could only answer with an error whose id
 * is null is answered here, on the POST that sent it, and the core never sees any of that POST.
 */
export function messagesOf(parsed: unknown): { messages: readonly Classified[]; raw: readonly unknown[] } | { refusal: string } {
  const batch = Array.isArray(parsed);
  const raw: unknown[] = batch ? parsed : [parsed];
  if (batch && raw.length === 0) return { refusal: errorLine(null, ErrorCode.InvalidRequest, 'Invalid request: an empty batch') };
  if (raw.length > MAX_BATCH_LENGTH) {
    return { refusal: errorLine(null, ErrorCode.InvalidRequest, `Invalid request: a batch of ${raw.length} messages exceeds MAX_BATCH_LENGTH (${MAX_BATCH_LENGTH}); send at most ${MAX_BATCH_LENGTH} per batch`) };
  }
  // Batch elements are handed on re-serialised, and a recursive JSON.stringify must never meet a value
  // deep enough to overflow; the core refuses anything this deep anyway (a single message reaches it as
  // the body's own text, and is refused there with its id).
  if (batch && raw.some((m) => nestsDeeperThan(m, MAX_JSON_DEPTH))) {
    return { refusal: errorLine(null, ErrorCode.InvalidRequest, `Invalid request: a batch element nests deeper than MAX_JSON_DEPTH (${MAX_JSON_DEPTH}) levels (nothing in this batch was run)`) };
  }
  const { messages } = readParsed(parsed);
  const invalid = messages.filter((m): m is Extract<Classified, { kind: 'invalid' }> => m.kind === 'invalid');
  if (invalid.length === 0) return { messages, raw };
  const errors = invalid.map((m) => errorLine(m.id, ErrorCode.InvalidRequest, `Invalid request: ${m.reason}${batch ? ' (nothing in this batch was run)' : ''}`));
  return { refusal: batch ? `[${errors.join(',')}]` : (errors[0] as string) };
}
