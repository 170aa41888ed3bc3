// A step of the core: the next state, the messages to send (each with what it answers), the effects to run
// (after the state is committed).

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Effect } from './effects.ts';
import { type ModernRequest, modernAnswer, modernErrorCode } from './era.ts';
import { answer, type Outgoing, refusal } from './outgoing.ts';
import { type ConnectionState, NO_PENDING, type Pending } from './state.ts';

export interface Step {
  readonly state: ConnectionState;
  /** Every message to send, in order: answers, notifications and the server's own requests alike. */
  readonly replies: Outgoing[];
  readonly effects: Effect[];
}

/** The result of request `id`; in a modern request's view, shaped for that era (era.ts). */
export const reply = (state: ConnectionState, id: RequestId, result: unknown, effects: Effect[] = []): Step =>
  ({ state, replies: [state.modern ? modernAnswer(state.modern, state.config.server, id, result) : answer(id, result)], effects });

export const fail = (state: ConnectionState, id: RequestId | null, code: number, message: string, data?: unknown): Step =>
  ({ state, replies: [refusal(id, state.modern ? modernErrorCode(code) : code, message, data)], effects: [] });

export const silent = (state: ConnectionState, effects: Effect[] = []): Step => ({ state, replies: [], effects });

/** Registers work in flight under a fresh ticket. */
export function addPending(state: ConnectionState, pending: Pending): { state: ConnectionState; ticket: number } {
  const ticket = state.nextTicket;
  // An empty table is not copied: `new Map(iterable)` walks the iteration protocol even for none (~0.2 µs
  // a call, and every inline read starts from an empty table).
  const next = state.pending.size === 0 ? new Map<number, Pending>() : new Map(state.pending);
  // Work a modern request starts (in its view, modern.ts) is marked modern: its answer is shaped for that era.
  next.set(ticket, state.modern === undefined || pending.modern !== undefined ? pending : markedModern(pending, state.modern));
  return { state: withPending(state, next, ticket + 1), ticket };
}

/**
 * `{ ...pending, modern }`, written so that Node 20's V8 copies it in ~0.1 µs: a key added to an object
 * made by a spread (in the literal or after it) takes a slow path there, ~2 µs and a new hidden class
 * each time (BENCHMARKS.md, 2026-07-28 vs 2025-06-18). `Object.assign` onto `{}` does not.
 */
function markedModern(pending: Pending, modern: ModernRequest): Pending {
  return Object.assign({}, pending, { modern });
}

export function removePending(state: ConnectionState, ticket: number): ConnectionState {
  if (!state.pending.has(ticket)) return state;
  if (state.pending.size === 1) return withPending(state, NO_PENDING, state.nextTicket);
  const next = new Map(state.pending);
  next.delete(ticket);
  return withPending(state, next, state.nextTicket);
}

/**
 * `{ ...state, pending, nextTicket }`, written field by field: every tool call goes through it twice (its
 * work registered, then answered), and on Node 20 (V8 11.3) a spread of an object that was itself made by
 * a spread takes a slow path, ~0.7 µs each (a state is always the previous step's copy); a literal copy is
 * ~0.01 µs (BENCHMARKS.md, issue 27). The `Required` type makes a new field of the state a compile error
 * here until it is listed. A modern view's two keys are kept exactly as the view has them.
 */
function withPending(state: ConnectionState, pending: ReadonlyMap<number, Pending>, nextTicket: number): ConnectionState {
  // A modern request's view (modern.ts `viewFor`) has both keys: written in the literal, not added after it,
  // they stay in the object (two keys added to a literal of fifteen took a property array and two map transitions).
  if ('modern' in state && 'roundTrip' in state) {
    return {
      config: state.config, phase: state.phase, protocolVersion: state.protocolVersion, clientCapabilities: state.clientCapabilities,
      clientInfo: state.clientInfo, harness: state.harness, logLevel: state.logLevel, pending, nextTicket,
      conversations: state.conversations, subscriptions: state.subscriptions, root: state.root, rootsAsked: state.rootsAsked,
      rootsRound: state.rootsRound, rootsWaiting: state.rootsWaiting, rootsHeld: state.rootsHeld, modern: state.modern, roundTrip: state.roundTrip,
    } satisfies Required<Omit<ConnectionState, 'modern' | 'roundTrip'>> & Pick<ConnectionState, 'modern' | 'roundTrip'>;
  }
  const next: Required<Omit<ConnectionState, 'modern' | 'roundTrip'>> & { -readonly [K in 'modern' | 'roundTrip']?: ConnectionState[K] } = {
    config: state.config, phase: state.phase, protocolVersion: state.protocolVersion, clientCapabilities: state.clientCapabilities,
    clientInfo: state.clientInfo, harness: state.harness, logLevel: state.logLevel, pending, nextTicket,
    conversations: state.conversations, subscriptions: state.subscriptions, root: state.root, rootsAsked: state.rootsAsked,
    rootsRound: state.rootsRound, rootsWaiting: state.rootsWaiting, rootsHeld: state.rootsHeld,
  };
  if ('modern' in state) next.modern = state.modern;
  if ('roundTrip' in state) next.roundTrip = state.roundTrip;
  return next;
}
