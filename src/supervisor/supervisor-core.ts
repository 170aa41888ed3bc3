// The generic supervisor loop that Supervisor and DynamicSupervisor share: the mailbox, the
// supervisor's own exit, watching children, starting and stopping incarnations, restart intensity
// and giving up. A subclass decides how children are kept and what a restart takes along.

import type { ChildHandle, ChildType, ExitWatcher, RestartType } from './child-spec.ts';
import { type Clock, realClock } from './clock.ts';
import { describeCause, crash, type ExitReason, killed, shutdown } from './exit-reason.ts';
import { RestartIntensityError, SupervisorError, type SupervisorErrorCode } from './errors.ts';
import type { LifecycleState } from './lifecycle.ts';
import { Mailbox } from './mailbox.ts';
import { restartIntensity } from './restart-intensity.ts';
import { shouldRestart } from './restart-strategy.ts';
import { callStart, type Incarnation, type IncarnationOwner, type StartOutcome, type SupervisedChild } from './supervised-child.ts';
import type { SupervisorEvent, SupervisorOptions } from './supervisor-events.ts';
import { shutdownHandle } from './shutdown.ts';

/** One row of `whichChildren()`, in start order. */
export interface ChildInfo {
  readonly id: string;
  readonly state: LifecycleState;
  readonly restart: RestartType;
  readonly type: ChildType;
}

/**
 * starting: the initial children are being started. running: supervising. stopping: `stop()` was
 * called or the supervisor gave up; exits are no longer acted on. exited: `exited` has settled.
 */
type Phase = 'starting' | 'running' | 'stopping' | 'exited';

interface CoreFlags {
  readonly name: string;
  readonly maxRestarts: number;
  readonly periodMs: number;
}

export abstract class SupervisorCore implements ChildHandle, IncarnationOwner {
  readonly name: string;
  /** The exit's promise, made when first asked for (`exited`): a session's supervisor is watched, never awaited. */
  #exited: Promise<ExitReason> | null = null;
  #settleExit: ((reason: ExitReason) => void) | null = null;
  /** The exit, once settled. */
  #exitReason: ExitReason | null = null;
  /** Told of the exit (watchExit): one watcher, or several in the order they asked. */
  #watchers: ExitWatcher | ExitWatcher[] | null = null;
  readonly #maxRestarts: number;
  readonly #periodMs: number;
  readonly #clock: Clock;
  readonly #onEvent: ((event: SupervisorEvent) => void) | undefined;
  readonly #mailbox = new Mailbox();
  #phase: Phase = 'starting';
  /** Times of the restarts inside the current period (see restartIntensity); shared empty list until the first. */
  #restarts: readonly number[] = NO_RESTARTS;

  protected constructor(flags: CoreFlags, options: SupervisorOptions) {
    this.name = flags.name;
    this.#maxRestarts = flags.maxRestarts;
    this.#periodMs = flags.periodMs;
    this.#clock = options.clock ?? realClock;
    this.#onEvent = options.onEvent;
  }

  /** Settles once: `shutdown` after `stop()`, `killed` after `kill()`, a crash when it gave up or failed. Never rejects. */
  get exited(): Promise<ExitReason> {
    if (this.#exited === null) {
      const reason = this.#exitReason;
      this.#exited = reason !== null ? Promise.resolve(reason) : new Promise<ExitReason>((resolve) => (this.#settleExit = resolve));
    }
    return this.#exited;
  }

  /** `ChildHandle.watchExit`: the parent's watch on this supervisor, and the application's on a session's. */
  watchExit(watcher: ExitWatcher): void {
    const reason = this.#exitReason;
    if (reason !== null) {
      queueMicrotask(() => watcher.onExit(reason));
      return;
    }
    const w = this.#watchers;
    this.#watchers = w === null ? watcher : Array.isArray(w) ? [...w, watcher] : [w, watcher];
  }

  /** Children in start order. */
  protected abstract children(): Iterable<SupervisedChild>;
  /** Carries out a restart of `trigger` (already `restarting`) by the strategy; called only while running. */
  protected abstract restart(trigger: SupervisedChild, reason: ExitReason): Promise<void>;
  /** `child` exited and will not be restarted: keep it as `stopped`, or let it go. */
  protected abstract exitedForGood(child: SupervisedChild): void;
  /** Stops every child, in the supervisor's shutdown order. */
  protected abstract stopAllChildren(): Promise<void>;

  /** Graceful: stops the children, then exits `shutdown`. Exits of children from now on are not acted on. Idempotent. */
  stop(): void {
    if (this.#phase === 'stopping' || this.#phase === 'exited') return;
    this.#phase = 'stopping';
    this.#postInternal(async () => {
      await this.stopAllChildren();
      this.#exit(shutdown);
    });
  }

  /**
   * Brutal, as an untrappable exit signal: kills every child (reverse start order) and exits `killed`
   * at once, without waiting for the children's exits or for an operation under way.
   */
  kill(): void {
    this.#die(killed);
  }

  whichChildren(): ChildInfo[] {
    return Array.from(this.children(), (c) => ({ id: c.id, state: c.lifecycle.state, restart: c.spec.restart, type: c.spec.type }));
  }

  protected get running(): boolean {
    return this.#phase === 'running';
  }

  /** Runs `init` as the first operation; the supervisor is running when it resolves, exited when it throws. */
  protected async boot(init: () => Promise<void>): Promise<void> {
    try {
      await this.#mailbox.post(() =>
        this.#guard(async () => {
          await init();
          // Set inside the operation: exits queued during init must find the supervisor running.
          if (this.#phase === 'starting') this.#phase = 'running';
        }),
      );
    } catch (error) {
      this.#exit(crash(error));
      throw error;
    }
  }

  /**
   * Runs an API operation in turn. Rejects with `not_running` once the supervisor is stopping or gone:
   * at once (a stop may wait on a hanging child for ever), and again when its turn comes.
   */
  protected call<T>(op: () => Promise<T>): Promise<T> {
    if (this.#phase !== 'running') return Promise.reject(this.notRunning());
    return this.#mailbox.post(() => (this.#phase === 'running' ? this.#guard(op) : Promise.reject(this.notRunning())));
  }

  protected error(code: SupervisorErrorCode, message: string, cause?: unknown): SupervisorError {
    return new SupervisorError(code, `supervisor "${this.name}": ${message}`, cause === undefined ? undefined : { cause });
  }

  protected startFailed(id: string, cause: unknown): SupervisorError {
    return this.error('start_failed', `child "${id}" failed to start: ${describeCause(cause)}`, cause);
  }

  protected notRunning(): SupervisorError {
    return this.error('not_running', this.#phase === 'stopping' ? 'is stopping' : 'is not running');
  }

  /**
   * Notifies `onEvent`. An observer that throws must not stop supervision (a broken logger is no
   * reason to lose the tree), so its error is reported as a process warning and supervision goes on.
   */
  protected emit(event: SupervisorEvent): void {
    if (!this.#onEvent) return;
    try {
      this.#onEvent(event);
    } catch (error) {
      reportDefect(this.name, new Error(`onEvent threw on ${event.type}`, { cause: error }));
    }
  }

  /** Starts an incarnation of `child` (in `starting` or `restarting`) and watches its exit. */
  protected async startIncarnation(child: SupervisedChild): Promise<StartOutcome> {
    const outcome = await callStart(child.spec);
    if (this.#phase === 'exited') {
      // Killed while this start was under way: the new incarnation has no supervisor left; end it.
      if (outcome.ok) outcome.handle.kill();
      throw this.notRunning();
    }
    if (!outcome.ok) {
      child.lifecycle.send('START_FAILED');
      this.emit({ type: 'child-start-failed', supervisor: this.name, id: child.id, cause: outcome.cause });
      return outcome;
    }
    // Watched from now on: its exit comes back as incarnationExited.
    child.attach(outcome.handle, this);
    child.lifecycle.send('STARTED');
    this.emit({ type: 'child-started', supervisor: this.name, id: child.id });
    return outcome;
  }

  /** Stops `child`'s incarnation by its shutdown setting; a child that is not running just becomes `stopped`. */
  protected async stopChild(child: SupervisedChild): Promise<void> {
    const incarnation = child.current;
    if (!incarnation) {
      if (child.lifecycle.can('STOPPED')) child.lifecycle.send('STOPPED');
      return;
    }
    child.lifecycle.send('STOP');
    const { reason, timedOut } = await shutdownHandle(incarnation.handle, child.spec.shutdown, this.#clock);
    if (this.#phase === 'exited') throw this.notRunning();
    child.detach();
    child.lifecycle.send('STOPPED');
    this.emit({ type: 'child-stopped', supervisor: this.name, id: child.id, reason, timedOut });
  }

  /**
   * Counts a restart of `trigger` against the restart intensity. Past it, gives up: `trigger` becomes
   * `failed`, every child is stopped, and the supervisor exits with a crash carrying a
   * RestartIntensityError (its parent sees that exit: escalation). Returns whether to go on.
   */
  protected async admitRestart(trigger: SupervisedChild, reason: ExitReason): Promise<boolean> {
    const verdict = restartIntensity(this.#restarts, this.#clock.now(), this.#maxRestarts, this.#periodMs);
    if (verdict.allowed) {
      this.#restarts = verdict.restarts;
      return true;
    }
    const details = { supervisor: this.name, childId: trigger.id, restarts: verdict.restarts.length, maxRestarts: this.#maxRestarts, periodMs: this.#periodMs, lastExit: reason };
    trigger.lifecycle.send('GIVE_UP');
    this.emit({ type: 'intensity-exceeded', supervisor: this.name, id: trigger.id, restarts: details.restarts, maxRestarts: details.maxRestarts, periodMs: details.periodMs, reason });
    this.#phase = 'stopping';
    await this.stopAllChildren();
    this.#exit(crash(new RestartIntensityError(details)));
    return false;
  }

  /**
   * Starts a `restarting` child again after `trigger`'s exit. A failed start leaves it `restarting`
   * and posts a retry (OTP's try_again) behind whatever is queued, e.g. a stop; the retry is a new
   * restart, counted by the restart intensity, so a child that can never start ends in a give-up.
   */
  protected async restartOne(child: SupervisedChild, reason: ExitReason, trigger: string): Promise<boolean> {
    const outcome = await this.startIncarnation(child);
    if (outcome.ok) {
      this.emit({ type: 'child-restarted', supervisor: this.name, id: child.id, reason, trigger });
      return true;
    }
    this.#postInternal(async () => {
      if (this.running && !child.retired && child.lifecycle.state === 'restarting') await this.restart(child, crash(outcome.cause));
    });
    return false;
  }

  /** @internal An incarnation's watch (supervised-child.ts): its exit, acted on in turn. */
  incarnationExited(child: SupervisedChild, incarnation: Incarnation, reason: ExitReason): void {
    this.#postInternal(() => this.#childExited(child, incarnation, reason));
  }

  async #childExited(child: SupervisedChild, incarnation: Incarnation, reason: ExitReason): Promise<void> {
    // Not the live incarnation: the supervisor stopped or replaced it itself. Not running: stopping,
    // and a child that dies now is not restarted (the stop takes care of it).
    if (!this.running || !child.isCurrent(incarnation)) return;
    child.detach();
    const willRestart = shouldRestart(child.spec.restart, reason);
    this.emit({ type: 'child-exited', supervisor: this.name, id: child.id, reason, willRestart });
    if (!willRestart) {
      child.lifecycle.send('EXITED');
      this.exitedForGood(child);
      return;
    }
    child.lifecycle.send('RESTART');
    await this.restart(child, reason);
  }

  /** Posts an operation nobody awaits (an exit, a retry, stop); its failure becomes this supervisor's exit. */
  #postInternal(op: () => Promise<void>): void {
    void this.#mailbox.post(async () => {
      try {
        await op();
      } catch (error) {
        // The abort of an operation interrupted by kill() is expected. A defect while alive kills the
        // supervisor (as in #guard). A defect after the exit has no supervisor left to end: report it.
        if (this.#phase !== 'exited') this.#die(crash(error));
        else if (!(error instanceof SupervisorError && error.code === 'not_running')) reportDefect(this.name, error);
      }
    });
  }

  async #guard<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (error) {
      // A SupervisorError is an answer for a caller (or the abort after a kill). Anything else is a
      // defect (a broken invariant): a supervisor that cannot trust its bookkeeping dies like a
      // crashed gen_server, its children killed, with the error as its exit reason.
      if (!(error instanceof SupervisorError)) this.#die(crash(error));
      throw error;
    }
  }

  #die(reason: ExitReason): void {
    if (this.#phase === 'exited') return;
    this.#phase = 'exited';
    for (const child of Array.from(this.children()).reverse()) {
      const incarnation = child.current;
      child.detach();
      if (child.lifecycle.can('STOPPED')) child.lifecycle.send('STOPPED');
      try {
        incarnation?.handle.kill();
      } catch (error) {
        // A handle whose kill() throws breaks its contract; the other children must still be killed.
        reportDefect(this.name, new Error(`kill() of child "${child.id}" threw; it may still be running`, { cause: error }));
      }
    }
    this.#exit(reason);
  }

  #exit(reason: ExitReason): void {
    if (this.#exitReason !== null) return;
    this.#phase = 'exited';
    this.#exitReason = reason;
    const watchers = this.#watchers;
    this.#watchers = null;
    // Queued before the promise's reactions, as reactions registered when the watchers asked would have been.
    if (watchers !== null) queueMicrotask(() => tell(watchers, reason));
    this.#settleExit?.(reason);
    this.#settleExit = null;
    this.emit({ type: 'supervisor-exited', supervisor: this.name, reason });
  }
}

const NO_RESTARTS: readonly number[] = Object.freeze([]);

/** Each watcher on its own, as separate reactions were: one that throws does not keep the exit from the others. */
function tell(watchers: ExitWatcher | ExitWatcher[], reason: ExitReason): void {
  for (const w of Array.isArray(watchers) ? watchers : [watchers]) {
    try {
      w.onExit(reason);
    } catch (error) {
      queueMicrotask(() => {
        throw error;
      });
    }
  }
}

/** Errors with no caller and no supervisor left to carry them go to the process's warnings (stderr by default). */
function reportDefect(supervisor: string, error: unknown): void {
  process.emitWarning(`supervisor "${supervisor}": ${describeCause(error)}`, { type: 'SupervisorWarning', detail: error instanceof Error ? error.stack : undefined });
}
