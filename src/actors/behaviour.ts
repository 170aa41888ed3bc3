// What an actor is: a behaviour `{ init, handle, terminate }` whose callbacks decide and return a tagged
// outcome (as gen_server's {reply, R, S} / {noreply, S} / {stop, Reason, S}); the runtime carries it out.

/** Why an actor stopped: as in OTP. `crash` carries a serialisable description of the cause. */
export type ActorExit =
  | { kind: 'normal' }
  | { kind: 'shutdown' }
  | { kind: 'killed' }
  | { kind: 'crash'; cause: { name: string; message: string; stack?: string } };

export type Outcome<S> =
  | { kind: 'reply'; reply: unknown; state: S }
  | { kind: 'noreply'; state: S }
  | { kind: 'stop'; reason: ActorExit; state: S; reply?: unknown };

/** What a behaviour may do besides returning: emit messages to its owner (the main thread). */
export interface ActorContext {
  readonly self: string;
  emit(message: unknown, transfer?: ArrayBuffer[]): void;
  /**
   * Ends this actor's turn and hands `message` back to it first thing on its next turn, before anything
   * else in its mailbox: long work is cut into pieces between which the thread serves other actors and
   * its heartbeat (a yield, as a BEAM process yields when its reductions are spent).
   */
  continueWith(message: unknown): void;
}

export interface Behaviour<Args = unknown, S = unknown, Msg = unknown> {
  init(args: Args, ctx: ActorContext): S;
  /** One message at a time. `kind: 'call'` messages expect a `reply` outcome; a cast's reply is ignored. */
  handle(message: Msg, state: S, ctx: ActorContext, kind: 'call' | 'cast'): Outcome<S>;
  terminate?(reason: ActorExit, state: S, ctx: ActorContext): void;
}

/** Where a scheduler worker finds a behaviour: a module URL and its export name, or `module: 'builtin'`
 * and the name of one compiled into the worker (registered by the thread's entry point, src/server/scheduler-entry.ts). */
export interface BehaviourRef {
  readonly module: string;
  readonly export: string;
}

export function crashOf(err: unknown): ActorExit {
  const e = err instanceof Error ? err : new Error(String(err));
  return { kind: 'crash', cause: { name: e.name, message: e.message, ...(e.stack ? { stack: e.stack } : {}) } };
}
