// The static supervisor (OTP's supervisor with one_for_one / one_for_all / rest_for_one): a fixed,
// ordered list of children, started in order, restarted by strategy, stopped in reverse order.
// It is itself a ChildHandle, so a supervisor can be a child of another and trees nest.

import { type ChildHandle, type ChildSpec, type ResolvedChildSpec, type RestartType, type Shutdown, validateChildSpec } from './child-spec.ts';
import { SupervisorError } from './errors.ts';
import type { ExitReason } from './exit-reason.ts';
import { restartScope } from './restart-strategy.ts';
import { SupervisedChild } from './supervised-child.ts';
import { SupervisorCore } from './supervisor-core.ts';
import type { SupervisorOptions } from './supervisor-events.ts';
import { type ResolvedSupervisorFlags, type Strategy, type SupervisorFlags, validateSupervisorFlags } from './supervisor-flags.ts';

/** OTP's count_children: `specs` known children, `active` running ones, and the specs by type. */
export interface ChildCounts {
  readonly specs: number;
  readonly active: number;
  readonly supervisors: number;
  readonly workers: number;
}

export class Supervisor extends SupervisorCore {
  readonly strategy: Strategy;
  /**
   * Start order. A temporary child leaves when it exits or is stopped; others stay, `stopped`, until deleted.
   * Replaced, never grown in place: an array grown by push reserves room for 17, and a server keeps one
   * supervisor with one child per session.
   */
  #children: readonly SupervisedChild[] = [];

  private constructor(flags: ResolvedSupervisorFlags, options: SupervisorOptions) {
    super(flags, options);
    this.strategy = flags.strategy;
  }

  /**
   * Validates the flags and specs (SupervisorError `invalid_flags` / `invalid_spec` / `duplicate_id`),
   * then starts the children in order. If one fails to start, those already started are stopped in
   * reverse order and this rejects with `start_failed` (its `cause` is the child's error).
   */
  static async start(flags: SupervisorFlags, children: readonly ChildSpec[], options: SupervisorOptions = {}): Promise<Supervisor> {
    const checked = validateSupervisorFlags(flags);
    if (!checked.ok) throw new SupervisorError('invalid_flags', checked.error);
    const specs = resolveChildren(checked.flags.name, children);
    const supervisor = new Supervisor(checked.flags, options);
    await supervisor.boot(() => supervisor.#startAll(specs));
    return supervisor;
  }

  /**
   * A ChildSpec that starts a nested Supervisor: `type: 'supervisor'` (so shutdown `infinity`),
   * named after `id` unless `flags.name` says otherwise.
   */
  static childSpec(
    id: string,
    flags: SupervisorFlags,
    children: readonly ChildSpec[],
    options: SupervisorOptions = {},
    overrides: { restart?: RestartType; shutdown?: Shutdown } = {},
  ): ChildSpec {
    return { id, type: 'supervisor', start: () => Supervisor.start({ name: id, ...flags }, children, options), ...overrides };
  }

  /**
   * Adds a child at the end of the start order and starts it. Rejects with `invalid_spec`,
   * `already_started` (the id is running), `already_present` (known, not running), `start_failed`
   * (the child is then not kept) or `not_running`. Resolves with the new incarnation's handle.
   */
  startChild(spec: ChildSpec): Promise<ChildHandle> {
    const checked = validateChildSpec(spec);
    if (!checked.ok) return Promise.reject(this.error('invalid_spec', checked.error));
    return this.call(async () => {
      const existing = this.#find(checked.spec.id);
      if (existing) {
        throw existing.current
          ? this.error('already_started', `child "${existing.id}" is already running`)
          : this.error('already_present', `child "${existing.id}" is already present (not running); use restartChild or deleteChild`);
      }
      const child = new SupervisedChild(checked.spec);
      this.#children = this.#children.concat(child);
      const outcome = await this.startIncarnation(child);
      if (!outcome.ok) {
        this.#remove(child);
        throw this.startFailed(child.id, outcome.cause);
      }
      return outcome.handle;
    });
  }

  /**
   * Stops the child by its shutdown setting. It stays known as `stopped` (a temporary child is
   * removed). Under one_for_all / rest_for_one a later sibling restart starts it again, as in OTP.
   * Rejects with `not_found` or `not_running`.
   */
  terminateChild(id: string): Promise<void> {
    return this.call(async () => {
      const child = this.#get(id);
      await this.stopChild(child);
      if (child.spec.restart === 'temporary') this.#remove(child);
    });
  }

  /**
   * Starts a `stopped` child again (not counted by the restart intensity, as in OTP). Rejects with
   * `not_found`, `running`, `restarting`, `start_failed` (it stays `stopped`) or `not_running`.
   */
  restartChild(id: string): Promise<ChildHandle> {
    return this.call(async () => {
      const child = this.#get(id);
      this.#assertNotRunning(child);
      child.lifecycle.send('RESTART');
      const outcome = await this.startIncarnation(child);
      if (!outcome.ok) {
        child.lifecycle.send('STOPPED');
        throw this.startFailed(id, outcome.cause);
      }
      return outcome.handle;
    });
  }

  /** Forgets a `stopped` child. Rejects with `not_found`, `running`, `restarting` or `not_running`. */
  deleteChild(id: string): Promise<void> {
    return this.call(async () => {
      const child = this.#get(id);
      this.#assertNotRunning(child);
      this.#remove(child);
    });
  }

  countChildren(): ChildCounts {
    const supervisors = this.#children.filter((c) => c.spec.type === 'supervisor').length;
    return {
      specs: this.#children.length,
      active: this.#children.filter((c) => c.current !== undefined).length,
      supervisors,
      workers: this.#children.length - supervisors,
    };
  }

  protected override children(): Iterable<SupervisedChild> {
    return this.#children;
  }

  protected override exitedForGood(child: SupervisedChild): void {
    if (child.spec.restart === 'temporary') this.#remove(child);
  }

  /** Reverse start order, one at a time: later children may depend on earlier ones. */
  protected override async stopAllChildren(): Promise<void> {
    for (const child of [...this.#children].reverse()) await this.stopChild(child);
  }

  /**
   * Stops the rest of the scope in reverse start order (temporary siblings stopped this way are
   * removed, not restarted), then starts the scope in start order. A stopped sibling in the scope is
   * started too, as OTP does. A failed start ends this round; its retry restarts from that child.
   */
  protected override async restart(trigger: SupervisedChild, reason: ExitReason): Promise<void> {
    if (!(await this.admitRestart(trigger, reason))) return;
    const scope = restartScope(this.strategy, this.#children.map((c) => c.id), trigger.id).map((id) => this.#get(id));
    for (const sibling of [...scope].reverse()) {
      if (sibling === trigger || !sibling.current) continue;
      await this.stopChild(sibling);
      if (sibling.spec.restart === 'temporary') this.#remove(sibling);
    }
    const restarting = scope.filter((c) => !c.retired);
    for (const child of restarting) if (child.lifecycle.state !== 'restarting') child.lifecycle.send('RESTART');
    for (const child of restarting) {
      // stop() arrived meanwhile: the stop operation takes the rest from `restarting` to `stopped`.
      if (!this.running) return;
      if (!(await this.restartOne(child, reason, trigger.id))) return;
    }
  }

  async #startAll(specs: readonly ResolvedChildSpec[]): Promise<void> {
    for (const spec of specs) {
      const child = new SupervisedChild(spec);
      this.#children = this.#children.concat(child);
      const outcome = await this.startIncarnation(child);
      if (!outcome.ok) {
        // OTP: a supervisor whose child cannot start does not start; undo what was started, newest first.
        await this.stopAllChildren();
        throw this.startFailed(spec.id, outcome.cause);
      }
    }
  }

  #find(id: string): SupervisedChild | undefined {
    return this.#children.find((c) => c.id === id);
  }

  #get(id: string): SupervisedChild {
    const child = this.#find(id);
    if (!child) throw this.error('not_found', `no child "${id}"`);
    return child;
  }

  #assertNotRunning(child: SupervisedChild): void {
    if (child.current) throw this.error('running', `child "${child.id}" is running; terminate it first`);
    if (child.lifecycle.state === 'restarting') throw this.error('restarting', `child "${child.id}" is being restarted`);
  }

  #remove(child: SupervisedChild): void {
    this.#children = this.#children.filter((c) => c !== child);
    child.retire();
  }
}

/** Validates every spec (first error wins) and refuses duplicate ids. */
function resolveChildren(supervisor: string, children: readonly ChildSpec[]): ResolvedChildSpec[] {
  const specs: ResolvedChildSpec[] = [];
  for (const [index, spec] of children.entries()) {
    const checked = validateChildSpec(spec);
    if (!checked.ok) throw new SupervisorError('invalid_spec', `supervisor "${supervisor}": children[${index}]: ${checked.error}`);
    if (specs.some((s) => s.id === checked.spec.id)) {
      throw new SupervisorError('duplicate_id', `supervisor "${supervisor}": children[${index}]: child id "${checked.spec.id}" is used twice`);
    }
    specs.push(checked.spec);
  }
  return specs;
}
