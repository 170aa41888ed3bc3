// The bounds on what one caller can make the core hold or do: every incoming message's nesting and
// batch length, and every structure a session keeps. A session's memory is bounded by these, not by
// how much its client sends; each limit is named in the error that enforces it.

/**
 * Deepest nesting of objects and arrays in one message (a batch element counts on its own; the
 * message object itself is level 1). Real MCP messages nest under 10 levels; the limit keeps
 * recursive consumers downstream (checkpoint encoding, structured clone, JSON.stringify) far from
 * their stack limit. Past it: a request gets -32602 with its id, a response counts as an error
 * answer, a notification is dropped (logged), anything else gets -32600 with id null.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Elements one JSON-RPC batch may carry (batches exist in 2025-03-26 and 2024-11-05). Past it the
 * whole batch is refused with one -32600 reply, id null; no element is handled.
 */
export const MAX_BATCH_LENGTH = 1000;

/**
 * Size of the `capabilities` an initialize may declare, as the length of their JSON text. The
 * session keeps them for its lifetime and in every checkpoint. Past it: -32602, the session stays
 * uninitialized.
 */
export const MAX_CLIENT_CAPABILITIES_BYTES = 64 * 1024;

/** Length of each string of the initialize `clientInfo` (name, version, title) the session keeps. Past it: -32602. */
export const MAX_CLIENT_INFO_STRING_LENGTH = 256;

/**
 * Length of a request id, or of a progress token, in characters (numbers are always accepted). Both
 * are kept while the request is in flight. Past it: -32600 with id null (an over-long id is not echoed).
 */
export const MAX_REQUEST_ID_LENGTH = 256;

/** Requests of one session in flight at once (tool calls, confirmations, resource reads, completions). Past it: -32011 (server busy). */
export const MAX_REQUESTS_IN_FLIGHT = 512;

/**
 * Conversations (harness tasks) one session starts; subscriptions are only possible to these, so the
 * same bound holds for them. Past it: a further `harness_task` call gets -32602.
 */
export const MAX_SESSION_CONVERSATIONS = 1000;

/** True when `value` nests objects/arrays deeper than `max`. Iterative, so any depth is safe to ask about. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: [object, number][] = [[value, 1]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [node, depth] = top;
    if (depth > max) return true;
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}
