// The transport contract: what stdio, Streamable HTTP and WebSocket need of the server, and all they may
// know of it. A transport opens a session for a principal, delivers the frames it read, receives every
// outgoing message with its routing (`Outgoing`: what it answers, what it belongs to), drains, answers
// what is still in flight, and closes. The server's one session registry stands behind it, so a session
// a transport opened is the same session /health, /metrics, the observer and the quota count.

import type { ReadFrame } from '../mcp/frame.ts';
import type { Outgoing } from '../mcp/outgoing.ts';
import type { Principal } from '../mcp/state.ts';
import type { Clock } from '../supervisor/clock.ts';
import type { FrameEvent } from './line-framer.ts';
import type { Refusal } from './session-quota.ts';

export type TransportName = 'stdio' | 'http' | 'websocket';

/** A session slot taken from the quota before the session exists; `release` gives it back (once, however often called). */
export interface SessionSlot {
  release(): void;
}

export interface OpenOptions {
  readonly principal: Principal;
  readonly transport: TransportName;
  /** Every message for the client, with the request it answers or belongs to. */
  readonly send: (out: Outgoing) => void;
  /**
   * The session's supervisor gave it up (its actor kept crashing): every request in flight has been
   * answered with -32010 `session-given-up`, and the session is leaving the registry.
   */
  readonly onGiveUp?: (message: string) => void;
  /**
   * Runs once when the session leaves the registry, whatever removed it (give-up, DELETE, reaper, shutdown).
   * Handed the session, as `busy` is: a transport may give every session one function, not a closure each.
   */
  readonly onEnded?: (session: HostedSession) => void;
  /** Does the transport hold the session busy (a POST waiting, a GET stream open)? The idle reaper spares it. */
  readonly busy?: (session: HostedSession) => boolean;
  /** The quota slot taken with `reserve` (else `open` takes one, and rejects if the quota refuses). */
  readonly slot?: SessionSlot;
  /** A session this node took over from another (a cluster): opened under its own id, from its stored checkpoint. */
  readonly resume?: ResumedSession;
  /**
   * Opened to serve 2026-07-28 requests, whose clients never learn its id: on a cluster it is not held in
   * the store (no other node will be asked for it, so there is nothing to take over).
   */
  readonly stateless?: boolean;
}

/** A session taken over on this node: its id (unchanged), the epoch this node holds it at, its checkpoint bytes. */
export interface ResumedSession {
  readonly id: string;
  readonly epoch: number;
  readonly bytes: Uint8Array;
}

/** One open session as a transport sees it. */
export interface HostedSession {
  /** The registry's id: random, so it may be shown to a remote caller (`Mcp-Session-Id`). */
  readonly id: string;
  readonly principal: Principal;
  readonly transport: TransportName;
  /** When a transport last saw the client use the session (`touch`), on the host's clock. */
  readonly lastActivity: number;
  /** Requests the session has not answered yet. */
  readonly inFlight: number;
  /** Characters of the client's messages delivered and not yet handled by the session (its input backlog). */
  readonly pendingInput: number;
  /** Resolves once `pendingInput` is at most `limit` (or the session has ended): a transport that stopped reading reads again. */
  whenInputBelow(limit: number): Promise<void>;
  /** A frame from the client; `read`: the transport's own reading of it (HTTP reads a POST once), if any. */
  deliver(frame: FrameEvent, read?: ReadFrame | null): void;
  /** The client used the session now (the idle reaper counts from here). */
  touch(): void;
  /** A request in flight, or the transport holds it busy. */
  busy(): boolean;
  /**
   * Does the node watch something for the session's client (a 2025 `resources/subscribe`, a listen's
   * transcripts or tasks)? A transport whose connection carries the updates (WebSocket) counts it as busy.
   */
  watching(): boolean;
  /** Resolves when no request is in flight, or after `ms` on the host's clock. */
  drain(ms: number): Promise<void>;
  /** Answers every request still in flight with an error saying why: nothing is left unanswered. */
  answerInFlight(reason: string): void;
}

export interface SessionHost {
  /** The time sessions' last activity and drains are read on (the idle reaper reads the same). */
  readonly clock: Clock;
  /** Takes a quota slot for `principal`, or says why not (429/503). */
  reserve(principal: Principal): SessionSlot | Refusal;
  open(options: OpenOptions): Promise<HostedSession>;
  /** The open session with this id, if `principal` owns it: another principal's session is not found. */
  find(id: string, principal: Principal): HostedSession | undefined;
  /** Every open session. */
  sessions(): Iterable<HostedSession>;
  /**
   * May one session serve the 2026-07-28 requests of several of `principal`'s clients? Only if nothing a
   * request leaves in it can reach another client. Absent: every principal but the anonymous one.
   */
  shareable?(principal: Principal): boolean;
  /** Ends the session: it leaves the registry (the one way a session ends). Idempotent. */
  close(id: string): Promise<void>;
  /** Resolves once no session has a request in flight, or after `ms` on the host's clock. */
  drain(ms: number): Promise<void>;
  /**
   * After a request failed: whether the shared store is unreachable, checked now (not at the last
   * periodic probe) — the 503 refusal with its Retry-After, or null (it answers, or there is no shared
   * store). Never rejects.
   */
  storeLoss?(): Promise<Refusal | null>;
}

/** Is this `reserve` answer a refusal? */
export function isRefusal(answer: SessionSlot | Refusal): answer is Refusal {
  return 'status' in answer;
}

/** Does `a` name the same principal as `b`? (Anonymous callers are one principal; sessions keep them apart by id.) */
export function samePrincipal(a: Principal, b: Principal): boolean {
  if (a.kind !== b.kind) return false;
  return a.kind !== 'token' || (b.kind === 'token' && a.name === b.name);
}
