// The one registry of open sessions, whatever their transport: id, principal, transport, last activity,
// requests in flight. /health, /metrics, the observer, the session quota and every transport read it;
// the `sessions` DynamicSupervisor supervises the sessions' actors but nobody looks a session up there.
// Removing a session from here is the one way a session ends (give-up, DELETE, idle reaper, shutdown),
// and removing it twice does nothing the second time.

import { randomUUID } from 'node:crypto';
import type { Session } from '../connection/session.ts';
import type { ReadFrame } from '../mcp/frame.ts';
import type { Principal } from '../mcp/state.ts';
import type { Clock } from '../supervisor/clock.ts';
import type { ExitReason } from '../supervisor/exit-reason.ts';
import type { FrameEvent } from '../transports/line-framer.ts';
import type { HostedSession, SessionSlot, TransportName } from '../transports/session-host.ts';
import { samePrincipal } from '../transports/session-host.ts';
import { type QuotaLimits, type Refusal, SessionQuota } from '../transports/session-quota.ts';

/** A quota slot; giving it back twice gives back one slot. */
class Slot implements SessionSlot {
  readonly #quota: SessionQuota;
  readonly #principal: Principal;
  #held = true;

  constructor(quota: SessionQuota, principal: Principal) {
    this.#quota = quota;
    this.#principal = principal;
  }

  release(): void {
    if (!this.#held) return;
    this.#held = false;
    this.#quota.release(this.#principal);
  }
}

export interface EntryParts {
  readonly principal: Principal;
  readonly transport: TransportName;
  /** The connection: its actor's host on the main thread. */
  readonly session: Session;
  readonly slot: SessionSlot;
  readonly busy?: (entry: RegisteredSession) => boolean;
  /** Does the node watch something for the session (`HostedSession.watching`)? One function for every session. */
  readonly watching?: (entry: RegisteredSession) => boolean;
  /**
   * What ending the session takes besides leaving the registry: the application's teardown, then the
   * transport's (`onEnded`). Handed the entry, so one function serves every session.
   */
  readonly teardown: (entry: RegisteredSession) => Promise<void>;
  /** The transport's: the session has ended (its teardown calls it: `ended()`). */
  readonly onEnded?: (entry: RegisteredSession) => void;
  /** The transport's: the session's supervisor gave it up (`givenUp(message)`). */
  readonly onGiveUp?: (message: string) => void;
  /** The session's supervisor exited: the entry watches it (`onExit`) and tells this, one function for every session. */
  readonly exited?: (entry: RegisteredSession, reason: ExitReason) => void;
}

/** One open session. */
export class RegisteredSession implements HostedSession {
  readonly id: string;
  readonly principal: Principal;
  readonly transport: TransportName;
  readonly session: Session;
  lastActivity: number;
  // The parts kept as fields, not as the object they came in (one object less per session).
  readonly #slot: SessionSlot;
  readonly #busy: EntryParts['busy'];
  readonly #watching: EntryParts['watching'];
  readonly #teardown: EntryParts['teardown'];
  readonly #onEnded: EntryParts['onEnded'];
  readonly #onGiveUp: EntryParts['onGiveUp'];
  readonly #exited: EntryParts['exited'];
  readonly #clock: Clock;

  constructor(id: string, parts: EntryParts, clock: Clock) {
    this.id = id;
    this.principal = parts.principal;
    this.transport = parts.transport;
    this.session = parts.session;
    this.#slot = parts.slot;
    this.#busy = parts.busy;
    this.#watching = parts.watching;
    this.#teardown = parts.teardown;
    this.#onEnded = parts.onEnded;
    this.#onGiveUp = parts.onGiveUp;
    this.#exited = parts.exited;
    this.#clock = clock;
    this.lastActivity = clock.now();
  }

  get inFlight(): number {
    return this.session.inFlight;
  }

  get pendingInput(): number {
    return this.session.pendingInput;
  }

  whenInputBelow(limit: number): Promise<void> {
    return this.session.whenInputBelow(limit);
  }

  deliver(frame: FrameEvent, read?: ReadFrame | null): void {
    this.session.receiveFrame(frame, read);
  }

  touch(): void {
    this.lastActivity = this.#clock.now();
  }

  busy(): boolean {
    return this.session.inFlight > 0 || (this.#busy?.(this) ?? false);
  }

  watching(): boolean {
    return this.#watching?.(this) ?? false;
  }

  drain(ms: number): Promise<void> {
    return within(this.#clock, this.session.idle(), ms);
  }

  answerInFlight(reason: string): void {
    this.session.answerInFlight(reason);
  }

  /** @internal the registry's: releases the slot and runs the teardown. */
  end(): Promise<void> {
    this.#slot.release();
    return this.#teardown(this);
  }

  /** @internal The watch on the session's supervisor (`ChildHandle.watchExit`): one object per session, no closure. */
  onExit(reason: ExitReason): void {
    this.#exited?.(this, reason);
  }

  /** @internal The teardown's last step: the transport hears that the session ended. */
  ended(): void {
    this.#onEnded?.(this);
  }

  /** @internal The session was given up: the transport hears why. */
  givenUp(message: string): void {
    this.#onGiveUp?.(message);
  }
}

export class SessionRegistry {
  readonly #open = new Map<string, RegisteredSession>();
  readonly #quota: SessionQuota;
  readonly #clock: Clock;
  /** Removals under way, so a second `remove` of the same id waits for the same end. */
  readonly #ending = new Map<string, Promise<void>>();

  constructor(limits: QuotaLimits, clock: Clock) {
    this.#quota = new SessionQuota(limits);
    this.#clock = clock;
  }

  get size(): number {
    return this.#open.size;
  }

  get clock(): Clock {
    return this.#clock;
  }

  /** Open sessions of each transport (for /health). */
  countByTransport(): Map<TransportName, number> {
    const counts = new Map<TransportName, number>();
    for (const s of this.#open.values()) counts.set(s.transport, (counts.get(s.transport) ?? 0) + 1);
    return counts;
  }

  reserve(principal: Principal): SessionSlot | Refusal {
    return this.#quota.acquire(principal) ?? new Slot(this.#quota, principal);
  }

  /**
   * Registers an opened session under `id`: random by default, since a remote caller sees it
   * (`Mcp-Session-Id`); a stdio session, which no one else sees, may keep its own (and a stdio start
   * then needs no node:crypto before its first reply).
   */
  add(parts: EntryParts, id: string = randomUUID()): RegisteredSession {
    if (this.#open.has(id)) throw new Error(`session id ${id} is already registered`);
    const entry = new RegisteredSession(id, parts, this.#clock);
    this.#open.set(entry.id, entry);
    return entry;
  }

  /** The session with this id, whoever owns it (the application's own bookkeeping). */
  get(id: string): RegisteredSession | undefined {
    return this.#open.get(id);
  }

  /** The session with this id if `principal` owns it: another principal's session is indistinguishable from none. */
  find(id: string, principal: Principal): RegisteredSession | undefined {
    const s = this.#open.get(id);
    return s !== undefined && samePrincipal(s.principal, principal) ? s : undefined;
  }

  values(): IterableIterator<RegisteredSession> {
    return this.#open.values();
  }

  /** Ends the session: out of the registry at once, then its teardown. Idempotent. */
  remove(id: string): Promise<void> {
    const ending = this.#ending.get(id);
    if (ending) return ending;
    const entry = this.#open.get(id);
    if (!entry) return Promise.resolve();
    this.#open.delete(id);
    const ended = entry.end().finally(() => this.#ending.delete(id));
    this.#ending.set(id, ended);
    return ended;
  }

  /** Resolves once no session has a request in flight, or after `ms`. */
  drain(ms: number): Promise<void> {
    return within(this.#clock, Promise.all([...this.#open.values()].map((s) => s.session.idle())).then(() => undefined), ms);
  }
}

/** `done`, or after `ms` on `clock`, whichever comes first; the timer is cleared either way. */
function within(clock: Clock, done: Promise<void>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = clock.setTimeout(resolve, ms);
    void done.then(() => {
      clock.clearTimeout(timer);
      resolve();
    });
  });
}
