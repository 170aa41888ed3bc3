// The dynamic supervisor (OTP's simple_one_for_one, Elixir's DynamicSupervisor): children of one
// kind (sessions, tasks) started on demand, each restarted on its own (one_for_one), up to a limit.
// It is itself a ChildHandle, so it sits in a static supervisor's tree.

import { type ChildHandle, type ChildSpec, type RestartType, type Shutdown, type StartFunction, validateChildSpec } from './child-spec.ts';
import { SupervisorError } from './errors.ts';
import type { ExitReason } from './exit-reason.ts';
import { SupervisedChild } from './supervised-child.ts';
import { SupervisorCore } from './supervisor-core.ts';
import type { SupervisorOptions } from './supervisor-events.ts';
import { type DynamicSupervisorFlags, type ResolvedDynamicSupervisorFlags, validateDynamicSupervisorFlags } from './supervisor-flags.ts';

export class DynamicSupervisor extends SupervisorCore {
  readonly maxChildren: number;
  readonly #template: ResolvedDynamicSupervisorFlags['child'];
  /** Insertion order is start order. A child that exits for good leaves at once (nothing to restart it from). */
  readonly #children = new Map<string, SupervisedChild>();
  /** startChild calls accepted and not yet in the map: they count against maxChildren, which bounds the mailbox too. */
  #queuedStarts = 0;

  private constructor(flags: ResolvedDynamicSupervisorFlags, options: SupervisorOptions) {
    super(flags, options);
    this.maxChildren = flags.maxChildren;
    this.#template = flags.child;
  }

  /** Validates the flags (SupervisorError `invalid_flags`) and starts with no children. */
  static async start(flags: DynamicSupervisorFlags = {}, options: SupervisorOptions = {}): Promise<DynamicSupervisor> {
    const checked = validateDynamicSupervisorFlags(flags);
    if (!checked.ok) throw new SupervisorError('invalid_flags', checked.error);
    const supervisor = new DynamicSupervisor(checked.flags, options);
    await supervisor.boot(async () => undefined);
    return supervisor;
  }

  /** A ChildSpec that starts a DynamicSupervisor (`type: 'supervisor'`), named after `id` unless `flags.name` says otherwise. */
  static childSpec(
    id: string,
    flags: DynamicSupervisorFlags = {},
    options: SupervisorOptions = {},
    overrides: { restart?: RestartType; shutdown?: Shutdown } = {},
  ): ChildSpec {
    return { id, type: 'supervisor', start: () => DynamicSupervisor.start({ name: id, ...flags }, options), ...overrides };
  }

  /**
   * Starts a child of the template's kind under `id` and resolves with its handle. Rejects with
   * `max_children` (at once, when running + queued starts reach maxChildren), `invalid_spec`,
   * `already_started` (the id is in use), `start_failed` (not kept) or `not_running`.
   */
  startChild(id: string, start: StartFunction): Promise<ChildHandle> {
    const checked = validateChildSpec({ id, start, ...this.#template });
    if (!checked.ok) return Promise.reject(this.error('invalid_spec', checked.error));
    if (this.#children.size + this.#queuedStarts >= this.maxChildren) {
      return Promise.reject(
        this.error('max_children', `cannot start child "${id}": already at maxChildren (${this.maxChildren}); stop some children or raise maxChildren`),
      );
    }
    this.#queuedStarts++;
    let queued = true;
    const dequeue = (): void => {
      if (queued) this.#queuedStarts--;
      queued = false;
    };
    return this.call(async () => {
      dequeue();
      if (this.#children.has(id)) throw this.error('already_started', `child "${id}" is already running`);
      const child = new SupervisedChild(checked.spec);
      this.#children.set(id, child);
      const outcome = await this.startIncarnation(child);
      if (!outcome.ok) {
        this.#remove(child);
        throw this.startFailed(id, outcome.cause);
      }
      return outcome.handle;
    }).finally(dequeue);
  }

  /** Stops the child by its shutdown setting and forgets it. Rejects with `not_found` or `not_running`. */
  terminateChild(id: string): Promise<void> {
    return this.call(async () => {
      const child = this.#children.get(id);
      if (!child) throw this.error('not_found', `no child "${id}"`);
      await this.stopChild(child);
      this.#remove(child);
    });
  }

  /** Children supervised now: running or being restarted. */
  count(): number {
    return this.#children.size;
  }

  protected override children(): Iterable<SupervisedChild> {
    return this.#children.values();
  }

  protected override exitedForGood(child: SupervisedChild): void {
    this.#remove(child);
  }

  /**
   * All at once, as OTP and Elixir stop dynamic children: they are independent, and with many
   * sessions one-by-one shutdown timeouts would add up to minutes.
   */
  protected override async stopAllChildren(): Promise<void> {
    await Promise.all(Array.from(this.#children.values(), (child) => this.stopChild(child)));
  }

  protected override async restart(trigger: SupervisedChild, reason: ExitReason): Promise<void> {
    if (await this.admitRestart(trigger, reason)) await this.restartOne(trigger, reason, trigger.id);
  }

  #remove(child: SupervisedChild): void {
    if (this.#children.get(child.id) === child) this.#children.delete(child.id);
    child.retire();
  }
}
