// What a Session is made with (session.ts): its id, the application's shared parts (scheduler, effects,
// config, logger) and the transport's send, with the optional checkpoint, its saver and the fault injection.

import type { Scheduler } from '../actors/scheduler.ts';
import type { Outgoing } from '../mcp/outgoing.ts';
import type { ConnectionConfig } from '../mcp/state.ts';
import type { Logger } from '../log/logger.ts';
import type { EffectDeps } from './effect-runner.ts';
import type { RequestAccount } from './principal-requests.ts';

export interface SessionDeps {
  readonly id: string;
  readonly scheduler: Scheduler;
  readonly effects: EffectDeps;
  readonly config: ConnectionConfig;
  readonly logger: Logger;
  /** Every message for the client, with the request it answers or belongs to (transports route by it). */
  readonly send: (out: Outgoing) => void;
  /** Fault injection: probability that the connection actor crashes on a message. */
  readonly crashProbability?: number;
  /** The checkpoint to start from: a session rehydrated on this node (its first actor resumes it, answering nothing early). */
  readonly checkpoint?: ArrayBuffer;
  /** Every new checkpoint, in order (a cluster node saves it in the shared store: cluster/checkpoint-saver.ts). */
  readonly onCheckpoint?: (checkpoint: ArrayBuffer) => void;
  /** The node's key for 2026-07-28 `requestState` seals, handed to each connection actor (docs/multi-round-trip.md). */
  readonly stateKey?: Uint8Array;
  /** This session's part of its principal's requests in flight on the node (MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL); none: unbounded across sessions. */
  readonly requests?: RequestAccount;
}
