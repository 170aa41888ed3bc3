// One session's SessionDeps as the application makes them: the application's shared parts, and the
// transport's send with the observer reading the negotiated version off the replies until it has it.
// `send` is a method and the session hands this object on as its sink (request-tracking.ts,
// early-answers.ts), so a session holds no wrapper closure and context of its own (issue 27).

import type { Scheduler } from '../actors/scheduler.ts';
import type { EffectDeps } from '../connection/effect-runner.ts';
import type { RequestAccount } from '../connection/principal-requests.ts';
import type { SessionDeps } from '../connection/session-deps.ts';
import type { Logger } from '../log/logger.ts';
import type { Outgoing } from '../mcp/outgoing.ts';
import type { ConnectionConfig } from '../mcp/state.ts';

/** Who reads the negotiated version off a session's replies: true once it has it (the outlet stops asking). */
export interface VersionWatch {
  versionFrom(id: string, out: Outgoing): boolean;
}

/** What every session of the application shares, and what a session may start from (a checkpoint, fault injection). */
export interface OutletParts {
  readonly scheduler: Scheduler;
  readonly effects: EffectDeps;
  readonly config: ConnectionConfig;
  readonly logger: Logger;
  readonly stateKey?: Uint8Array | undefined;
  readonly checkpoint?: ArrayBuffer | undefined;
  readonly onCheckpoint?: ((checkpoint: ArrayBuffer) => void) | undefined;
  readonly crashProbability?: number | undefined;
  readonly requests?: RequestAccount | undefined;
}

export class SessionOutlet implements SessionDeps {
  readonly id: string;
  readonly scheduler: Scheduler;
  readonly effects: EffectDeps;
  readonly config: ConnectionConfig;
  readonly logger: Logger;
  readonly stateKey?: Uint8Array;
  readonly checkpoint?: ArrayBuffer;
  readonly onCheckpoint?: (checkpoint: ArrayBuffer) => void;
  readonly crashProbability?: number;
  readonly requests?: RequestAccount;
  readonly #send: (out: Outgoing) => void;
  #versions: VersionWatch | null;

  constructor(id: string, send: (out: Outgoing) => void, versions: VersionWatch, parts: OutletParts) {
    this.id = id;
    this.#send = send;
    this.#versions = versions;
    this.scheduler = parts.scheduler;
    this.effects = parts.effects;
    this.config = parts.config;
    this.logger = parts.logger;
    if (parts.stateKey !== undefined) this.stateKey = parts.stateKey;
    if (parts.checkpoint !== undefined) this.checkpoint = parts.checkpoint;
    if (parts.onCheckpoint !== undefined) this.onCheckpoint = parts.onCheckpoint;
    if (parts.crashProbability) this.crashProbability = parts.crashProbability;
    if (parts.requests !== undefined) this.requests = parts.requests;
  }

  /** Every message for the client: to the transport, unchanged; the replies before the version is known are shown to the watch. */
  send(out: Outgoing): void {
    if (this.#versions?.versionFrom(this.id, out)) this.#versions = null;
    this.#send(out);
  }
}
