// The reply of every paginated list method: one page under `key`, with `nextCursor` when more follow.

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode } from '../jsonrpc.ts';
import { paginate } from '../pagination.ts';
import type { ConnectionState } from '../state.ts';
import { fail, reply, type Step } from '../step.ts';

export function listReply<T>(state: ConnectionState, id: RequestId, key: string, items: readonly T[], cursor: unknown): Step {
  const page = paginate(items, cursor, state.config.pageSize);
  if (!page.ok) return fail(state, id, ErrorCode.InvalidParams, page.message);
  return reply(state, id, page.nextCursor ? { [key]: page.items, nextCursor: page.nextCursor } : { [key]: page.items });
}
