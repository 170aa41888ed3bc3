// A step of the core: the next state, the lines to send, the effects to run (after the state is committed).

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Effect } from './effects.ts';
import { errorLine, resultLine } from './jsonrpc.ts';
import type { ConnectionState, Pending } from './state.ts';

export interface Step {
  readonly state: ConnectionState;
  readonly replies: string[];
  readonly effects: Effect[];
}

export const reply = (state: ConnectionState, id: RequestId, result: unknown, effects: Effect[] = []): Step =>
  ({ state, replies: [resultLine(id, result)], effects });

export const fail = (state: ConnectionState, id: RequestId | null, code: number, message: string, data?: unknown): Step =>
  ({ state, replies: [errorLine(id, code, message, data)], effects: [] });

export const silent = (state: ConnectionState, effects: Effect[] = []): Step => ({ state, replies: [], effects });

/** Registers work in flight under a fresh ticket. */
export function addPending(state: ConnectionState, pending: Pending): { state: ConnectionState; ticket: number } {
  const ticket = state.nextTicket;
  const next = new Map(state.pending);
  next.set(ticket, pending);
  return { state: { ...state, pending: next, nextTicket: ticket + 1 }, ticket };
}

export function removePending(state: ConnectionState, ticket: number): ConnectionState {
  if (!state.pending.has(ticket)) return state;
  const next = new Map(state.pending);
  next.delete(ticket);
  return { ...state, pending: next };
}
