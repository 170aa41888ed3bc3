// The connection actor: one per MCP session. It wraps the pure core — a line or an effect result in,
// messages (each saying what it answers) and effects out to its owner — and checkpoints the session whenever the session's identity
// (version, capabilities, harness, principal, log level, subscriptions) changes, so a restart resumes the session.

import type { EffectResult } from '../mcp/effects.ts';
import { type BatchRest, continueBatch, handleEffectResult, handleMcpLineSliced, handleParsedMessage, type Outgoing, rejectMessage, type SlicedStep, type Step } from '../mcp/handle.ts';
import type { ConnectionConfig, ConnectionState, Pending } from '../mcp/state.ts';
import { initialState, NO_PENDING } from '../mcp/state.ts';
import type { Behaviour, BehaviourRef } from '../actors/behaviour.ts';
import { decodeCheckpoint, encodeCheckpoint } from '../actors/codec.ts';
import { settleInline } from './inline-effects.ts';
import { type LineMessage, parsedValueOf } from './parsed-lines.ts';
import { recordInlineCall } from '../actors/inline-tally.ts';
import type { StateSealer } from '../mcp/request-state.ts';
import { roundTripAt, sharedSealer, threadSealer } from './request-sealer.ts';
import { BATCH_SLICE_LENGTH } from '../limits.ts';

export const connectionBehaviourRef: BehaviourRef = { module: 'builtin', export: 'connection' };

export interface ConnectionActorArgs {
  readonly config: ConnectionConfig;
  /** The last checkpoint of this session (src/actors/codec.ts), when this is a restart. */
  readonly checkpoint?: ArrayBuffer;
  /** Fault injection: the probability that handling a message crashes the actor. */
  readonly crashProbability?: number;
  /**
   * Tool calls an earlier incarnation began whose work outlived it (it runs on the main thread): this one
   * takes them over, so their results answer them here instead of the work being run again or lost.
   */
  readonly adopted?: readonly [number, Pending][];
  /** Tickets below this were issued by earlier incarnations: never reused, so a late result cannot answer the wrong call. */
  readonly ticketFloor?: number;
  /** The node's key for 2026-07-28 `requestState` seals (docs/multi-round-trip.md); absent, a random key of this thread's own, made at the first seal (request-sealer.ts). Never checkpointed. */
  readonly stateKey?: Uint8Array;
}

export type ConnectionMessage =
  | LineMessage
  | { k: 'unreadable'; problem: 'oversized' | 'invalid-utf8'; detail: string }
  | { k: 'result'; result: EffectResult }
  /** The rest of a batch this actor began: handed back to itself (`continueWith`), never sent by others. */
  | { k: 'batch'; rest: BatchRest };

/** What the actor emits after each message. */
export interface ConnectionOutput {
  /** The messages for the client, each with the request it answers or belongs to: the owner routes by these. */
  readonly replies: Outgoing[];
  readonly effects: Step['effects'];
  readonly checkpoint?: ArrayBuffer;
  /**
   * Messages from the owner this incarnation has finished, counted from its start (a batch finishes with
   * its last slice). The owner keeps what it sent until it is counted here: after a crash, the first
   * message not counted is the one that was being handled, and the ones after it were never begun.
   */
  readonly handled: number;
}

/**
 * The part of the state a restarted actor needs. Work in flight is answered by the owner instead — except
 * harness tasks, which outlive this actor (they are actors of their own): their tickets are kept, so the
 * restarted actor still knows which request each task answers.
 */
export type Checkpoint = Omit<ConnectionState, 'pending' | 'rootsHeld' | 'config'> & {
  readonly tasks: [number, Pending][];
  /**
   * Absent from the checkpoints an actor writes: the core never changes its config, and every
   * incarnation is handed the session's config (`args.config`; on another node, that node's). Read when
   * present (checkpoints written before, and rehydrated ones): ~0.2 KB less per idle session kept.
   */
  readonly config?: ConnectionConfig;
};

interface ActorState {
  readonly session: ConnectionState;
  readonly crashProbability: number;
  readonly handled: number;
  /** Built once from `stateKey`, kept beside the session (never in it: a function is not checkpointed). */
  readonly sealer: StateSealer | null;
}

export class ChaosCrash extends Error {
  override readonly name = 'ChaosCrash';
}

export const connectionBehaviour: Behaviour<ConnectionActorArgs, ActorState, ConnectionMessage> = {
  init(args) {
    const base = args.checkpoint
      ? resumed(decodeCheckpoint<Checkpoint>(args.checkpoint), args.config)
      : initialState(args.config);
    const pending = args.adopted && args.adopted.length > 0 ? new Map([...base.pending, ...args.adopted]) : base.pending;
    const session: ConnectionState = { ...base, config: sharedConfig(base.config), pending, nextTicket: Math.max(base.nextTicket, args.ticketFloor ?? 0) };
    return { session, crashProbability: args.crashProbability ?? 0, handled: 0, sealer: args.stateKey === undefined ? threadSealer() : sharedSealer(args.stateKey) };
  },

  handle(message, state, ctx) {
    if (state.crashProbability > 0 && Math.random() < state.crashProbability) {
      throw new ChaosCrash('chaos: crash-actor made this connection actor crash while handling a message');
    }
    const before = state.session;
    // Small reads run here, on this thread, and only the final reply leaves it (inline-effects.ts); the
    // metrics learn of them from the thread's tally, in batches, not from this output (inline-tally.ts).
    const sliced = coreStep(message, before, state.sealer);
    if (sliced.rest) ctx.continueWith({ k: 'batch', rest: sliced.rest } satisfies ConnectionMessage);
    const step = settleInline(sliced, before.config.workspace, recordInlineCall);
    const after = sharedClient(before, step.state);
    // Every finished message is reported, even one with nothing to say: the owner's redelivery counts on it.
    const handled = sliced.rest ? state.handled : state.handled + 1;
    if (identityChanged(before, after)) {
      const checkpoint = encodeCheckpoint(checkpointOf(after));
      ctx.emit({ replies: step.replies, effects: step.effects, checkpoint, handled } satisfies ConnectionOutput, [checkpoint]);
    } else if (step.replies.length > 0 || step.effects.length > 0 || handled !== state.handled) {
      ctx.emit({ replies: step.replies, effects: step.effects, handled } satisfies ConnectionOutput);
    }
    // Written out, not `{ ...state, session, handled }`: a spread of the last message's spread is V8's slow path on Node 20 (mcp/step.ts).
    const next: ActorState = { session: after, crashProbability: state.crashProbability, handled, sealer: state.sealer };
    return { kind: 'noreply', state: next };
  },
};

function coreStep(message: ConnectionMessage, state: ConnectionState, sealer: StateSealer | null): SlicedStep {
  switch (message.k) {
    case 'line': {
      // Parsed once: by the session, when it is on this thread and the line is one message (parsed-lines.ts).
      const parsed = parsedValueOf(message);
      return parsed === undefined
        ? handleMcpLineSliced(message.line, state, BATCH_SLICE_LENGTH, roundTripAt(sealer))
        : handleParsedMessage(parsed, state, roundTripAt(sealer));
    }
    case 'batch': return continueBatch(message.rest, state, BATCH_SLICE_LENGTH, roundTripAt(sealer));
    case 'result': return handleEffectResult(message.result, state, roundTripAt(sealer));
    case 'unreadable': return rejectMessage(message.problem, message.detail, state);
  }
}

/** The config of the last actor this thread started, as JSON and as the object its state holds. */
let lastConfig: { json: string; config: ConnectionConfig } | null = null;

/**
 * One copy of a config equal to the last one (spawn args arrive cloned, one copy per actor; the sessions
 * of one node differ at most by principal): ~0.2 KB less per idle session on its thread.
 */
function sharedConfig(config: ConnectionConfig): ConnectionConfig {
  const json = JSON.stringify(config);
  if (lastConfig?.json !== json) lastConfig = { json, config };
  return lastConfig.config;
}

/** The client identity (info and capabilities) of the last session this thread saw initialize, as JSON and as the objects its state holds. */
let lastClient: { json: string; info: ConnectionState['clientInfo']; capabilities: ConnectionState['clientCapabilities'] } | null = null;

/**
 * `b` with the client's info and capabilities shared with the last session that declared equal ones (the
 * sessions of one client all declare the same): ~0.1 KB less per idle session on its thread. Checked by
 * reference on every step, serialized only when they changed (an initialize).
 */
function sharedClient(a: ConnectionState, b: ConnectionState): ConnectionState {
  if (a.clientInfo === b.clientInfo && a.clientCapabilities === b.clientCapabilities) return b;
  const json = JSON.stringify([b.clientInfo, b.clientCapabilities]);
  if (lastClient?.json !== json) {
    lastClient = { json, info: b.clientInfo, capabilities: b.clientCapabilities };
    return b;
  }
  // Object.assign onto {}, not a spread: a state made by a spread sends every later copy of it down V8's slow path (mcp/step.ts).
  return Object.assign({}, b, { clientInfo: lastClient.info, clientCapabilities: lastClient.capabilities });
}

function identityChanged(a: ConnectionState, b: ConnectionState): boolean {
  return a.phase !== b.phase || a.protocolVersion !== b.protocolVersion || a.clientCapabilities !== b.clientCapabilities
    || a.harness !== b.harness || a.logLevel !== b.logLevel || a.conversations !== b.conversations || a.config !== b.config
    // Subscriptions are the session's too: a session rehydrated on another node keeps them (cluster design).
    || a.subscriptions !== b.subscriptions
    // The client's root is the session's workspace: a restarted actor must work where this one did.
    || a.root !== b.root || a.rootsAsked !== b.rootsAsked || a.rootsWaiting !== b.rootsWaiting
    || (a.pending !== b.pending && taskCount(a) !== taskCount(b));
}

const isTask = (p: Pending): boolean => p.kind === 'tool' && p.tool === 'harness_task';

function taskCount(s: ConnectionState): number {
  let n = 0;
  for (const p of s.pending.values()) if (isTask(p)) n++;
  return n;
}

function checkpointOf(s: ConnectionState): Checkpoint {
  // Held requests are the owner's to redeliver after a crash, as other requests in flight are.
  const { pending, rootsHeld: _held, config: _config, ...rest } = s;
  return { ...rest, tasks: [...pending].filter(([, p]) => isTask(p)) };
}

function resumed(checkpoint: Checkpoint, given: ConnectionConfig): ConnectionState {
  const { tasks, config: saved, ...rest } = checkpoint;
  // A checkpoint written before roots were followed lacks their fields: it resumes as a session that ignores them.
  const older: Partial<Pick<ConnectionState, 'root' | 'rootsAsked' | 'rootsRound' | 'rootsWaiting'>> = rest;
  const config = saved === undefined ? given : { ...saved, roots: (saved as Partial<ConnectionConfig>).roots ?? 'ignore' };
  return {
    ...rest, root: older.root ?? null, rootsAsked: older.rootsAsked ?? null, rootsRound: older.rootsRound ?? 0,
    rootsWaiting: older.rootsWaiting ?? false, rootsHeld: initialState(config).rootsHeld,
    config, pending: tasks.length === 0 ? NO_PENDING : new Map(tasks),
  };
}
