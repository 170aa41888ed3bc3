// On a WebSocket, whose token's scopes do not grant everything, each frame is checked against the
// capability it needs (auth/scopes.ts) before it reaches the session: there is no HTTP status per
// message, so a request that needs a missing scope is answered with a JSON-RPC error naming the scope.

import type { BearerAuthority } from '../auth/bearer-authority.ts';
import { ALL_CAPABILITIES, type Capability, capabilityFor } from '../auth/scopes.ts';
import { ErrorCode, errorLine } from '../mcp/jsonrpc.ts';
import { messageTextToParse } from '../mcp/text-depth.ts';

/** The error line answering `text`, or null when the frame may go on (the session answers anything malformed). */
export function scopeRefusal(text: string, granted: ReadonlySet<Capability>, auth: BearerAuthority): string | null {
  // Static tokens and anonymous callers hold every capability: nothing is parsed twice for them.
  if (granted.size === ALL_CAPABILITIES.size) return null;
  let message: unknown;
  try {
    // Bounded before it is parsed, as the session parses it (mcp/text-depth.ts): a deep frame is the session's to refuse.
    message = JSON.parse(messageTextToParse(text));
  } catch {
    // Not JSON: the session answers it with its parse error, as for anyone.
    return null;
  }
  const items: unknown[] = Array.isArray(message) ? message : [message];
  for (const item of items) {
    if (typeof item !== 'object' || item === null) continue;
    const { method, params, id } = item as { method?: unknown; params?: unknown; id?: unknown };
    // No method: an answer, which needs what answering the server's request `id` lets happen (a confirmation's call).
    const answer = typeof method !== 'string';
    const needed = capabilityFor(answer ? undefined : method, params, id);
    if (granted.has(needed)) continue;
    const refusal = auth.insufficientScope(needed);
    // A refused answer is told with id null: its id is the server's own, which no request of the client's has.
    const replyId = !answer && (typeof id === 'string' || typeof id === 'number') ? id : null;
    return errorLine(replyId, ErrorCode.InvalidRequest, `${refusal.message} (${refusal.headers['WWW-Authenticate'] ?? ''})`);
  }
  return null;
}
