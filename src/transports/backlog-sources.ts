// The connections that take part in the node's output budget (output-budget.ts), as the budget sees them:
// a WebSocket measures its `bufferedAmount`, an HTTP connection its socket's unsent bytes (every reply on
// it: SSE streams, POST replies, finished replies still leaving). An evicted one is destroyed at once: a
// close frame or the end of a stream would wait behind the very bytes the node has to drop, so the client
// learns of it from the connection ending (WebSocket 1006), and the log says why, once per connection.

import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import type { Logger } from '../log/logger.ts';
import type { Principal } from '../mcp/state.ts';
import type { Backlog, Eviction, OutputBudget } from './output-budget.ts';

/** Who a connection serves, for the log: the session id and the principal's name, never a token. */
export type Holder = () => Record<string, unknown>;

/** The principal as the log names it: a token's name (not the token), or its kind. */
export function principalName(principal: Principal): string {
  return principal.kind === 'token' ? principal.name : principal.kind;
}

/** A WebSocket's part of the budget, closed with the socket; null without a budget. */
export function webSocketBacklog(budget: OutputBudget | undefined, ws: WebSocket, logger: Logger, holder: Holder): Backlog | null {
  if (budget === undefined) return null;
  const backlog = budget.open({
    measure: () => ws.bufferedAmount,
    evict: (eviction) => {
      warn(logger, 'WebSocket closed: the node holds more unread output than its budget, and this socket the most', eviction, holder);
      // 1008 is sent for a client that may still read the rest; the socket then goes at once with its bytes.
      try {
        ws.close(1008, 'the node holds too much unread output (MAX_NODE_OUTPUT_BACKLOG_BYTES); read your answers');
      } finally {
        ws.terminate();
      }
    },
  });
  ws.once('close', () => backlog.close());
  return backlog;
}

/** An HTTP connection's part of the budget: writers note it through the reply's socket (`noteConnection`). */
export function httpConnectionBacklog(budget: OutputBudget, socket: Socket, logger: Logger, holder: Holder): Backlog {
  const backlog = budget.openConnection(socket, {
    measure: () => (socket.destroyed ? 0 : socket.writableLength),
    evict: (eviction) => {
      warn(logger, 'HTTP connection closed: the node holds more unread output than its budget, and this connection the most (its SSE streams end)', eviction, holder);
      socket.destroy();
    },
  });
  socket.on('drain', () => backlog.note());
  socket.once('close', () => backlog.close());
  return backlog;
}

function warn(logger: Logger, message: string, eviction: Eviction, holder: Holder): void {
  logger.log('warning', message, { ...holder(), bytes: eviction.bytes, total: eviction.total, limit: eviction.limit });
}
