// The application's supervision tree (drawn in application.ts): scheduler threads, the tool pool, and the
// dynamic supervisors sessions and tasks start under; its restart intensities, its events (to the
// observer and the log), and the chaos timers that kill workers on purpose.

import type { ChildHandle, ChildSpec, SupervisorEvent } from '../supervisor/index.ts';
import { DynamicSupervisor, type ExitReason, describeExit, startRoot, Supervisor } from '../supervisor/index.ts';
import type { TreeIntensities } from '../supervisor/intensities.ts';
import type { Scheduler } from '../actors/scheduler.ts';
import { describeChaos } from './chaos.ts';
import type { ToolPool } from '../tools/tool-pool.ts';
import type { ServerObserver } from '../observer/server-observer.ts';
import type { Clock } from '../time/clock.ts';
import { DEFAULT_TREE_INTENSITIES } from '../limits.ts';
import type { ApplicationOptions } from './application-options.ts';
import type { SessionRegistry } from './session-registry.ts';

export interface TreeParts {
  readonly options: ApplicationOptions;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly tools: ToolPool;
  readonly observer: ServerObserver;
  readonly registry: SessionRegistry;
}

export class ApplicationTree {
  readonly scheduler: Scheduler;
  readonly tools: ToolPool;
  readonly observer: ServerObserver;
  readonly registry: SessionRegistry;
  readonly #options: ApplicationOptions;
  readonly #clock: Clock;
  #root: Supervisor | null = null;
  #sessions: DynamicSupervisor | null = null;
  #tasks: DynamicSupervisor | null = null;
  #restarts = 0;
  #chaosTimer: unknown;
  #taskChaosTimer: unknown;

  constructor(parts: TreeParts) {
    this.#options = parts.options;
    this.#clock = parts.clock;
    this.scheduler = parts.scheduler;
    this.tools = parts.tools;
    this.observer = parts.observer;
    this.registry = parts.registry;
  }

  /** The root, while the tree runs. */
  get root(): Supervisor | null {
    return this.#root;
  }

  /** Where each session's supervisor starts (null until booted). */
  get sessions(): DynamicSupervisor | null {
    return this.#sessions;
  }

  /** Where each task's supervisor starts (null until booted). */
  get tasks(): DynamicSupervisor | null {
    return this.#tasks;
  }

  /** Children restarted anywhere in the tree since it started. */
  get restarts(): number {
    return this.#restarts;
  }

  /** Stops the chaos timers (the first step of a stop: nothing is killed on purpose any more). */
  stopChaos(): void {
    this.#clock.clearInterval(this.#chaosTimer);
    this.#clock.clearInterval(this.#taskChaosTimer);
  }

  /** Stops the root and waits for the whole tree to exit. */
  async stop(): Promise<void> {
    const root = this.#root;
    this.#root = null;
    if (root) {
      root.stop();
      await root.exited;
    }
  }

  async boot(): Promise<void> {
    const { logger, chaos } = this.#options;
    const warning = describeChaos(chaos);
    if (warning) logger.log('warning', warning);
    const schedulerSlots: ChildSpec[] = Array.from({ length: this.scheduler.threadCount }, (_, slot) => ({
      id: `scheduler-${slot}`,
      start: () => this.scheduler.startThread(slot),
      restart: 'permanent',
      shutdown: 2000,
    }));
    const children: ChildSpec[] = [
      {
        id: 'schedulers',
        type: 'supervisor',
        start: () => Supervisor.start({ name: 'schedulers', strategy: 'one_for_one', ...this.intensity('schedulers') }, schedulerSlots, this.supervisorOptions()),
      },
      { id: 'tools', start: () => this.#toolPoolHandle(), restart: 'permanent', shutdown: 5000 },
      {
        id: 'sessions',
        type: 'supervisor',
        start: async () => {
          this.#sessions = await DynamicSupervisor.start({ name: 'sessions', child: { restart: 'temporary', type: 'supervisor' } }, this.supervisorOptions());
          return this.#sessions;
        },
      },
      {
        id: 'tasks',
        type: 'supervisor',
        start: async () => {
          this.#tasks = await DynamicSupervisor.start({ name: 'tasks', child: { restart: 'temporary', type: 'supervisor' } }, this.supervisorOptions());
          return this.#tasks;
        },
      },
    ];
    this.#root = await startRoot({ strategy: 'one_for_one', ...this.intensity('root') }, children, {
      ...this.supervisorOptions(),
      onGiveUp: (message) => {
        logger.log('critical', message);
        this.#options.onGiveUp(message);
      },
    });
    if (chaos.killWorkerEveryMs !== undefined) {
      this.#chaosTimer = this.#clock.setInterval(() => {
        // Booting threads are fair game too: a storm must be able to outrun the restarts.
        const live = this.scheduler.threads().filter((t) => t.alive);
        const victim = live[Math.floor(Math.random() * live.length)];
        if (!victim) return;
        logger.log('warning', 'chaos: killing a scheduler worker', { worker: victim.index, actors: victim.actors.size });
        victim.kill();
      }, chaos.killWorkerEveryMs, { unref: true });
    }
    if (chaos.killTaskWorkerEveryMs !== undefined) {
      this.#taskChaosTimer = this.#clock.setInterval(() => this.#killATaskWorker(), chaos.killTaskWorkerEveryMs, { unref: true });
    }
  }

  /** Fault injection: terminates the scheduler worker that hosts a running task actor (if any runs). */
  #killATaskWorker(): void {
    const actors = [...this.registry.values()].flatMap((s) => s.session.tasks?.running ?? []).map((r) => r.actorId).filter((id): id is string => id !== null);
    const victim = this.scheduler.threads().find((t) => t.alive && actors.some((id) => t.actors.has(id)));
    if (!victim) return;
    this.#options.logger.log('warning', 'chaos: killing the scheduler worker of a task', { worker: victim.index, actors: victim.actors.size });
    victim.kill();
  }

  /** Every supervisor of the tree reports to the observer and times its restarts on the application's clock. */
  /** One object for every supervisor of the tree (a session's supervisor made its own closure, per session). */
  supervisorOptions(): { clock: Clock; onEvent: (e: SupervisorEvent) => void } {
    return (this.#supervisorOptions ??= { clock: this.#clock, onEvent: (e) => this.#observe(e) });
  }

  #supervisorOptions: { clock: Clock; onEvent: (e: SupervisorEvent) => void } | null = null;

  intensity(level: keyof TreeIntensities): { maxRestarts: number; periodMs: number } {
    const { maxRestarts, periodMs } = (this.#options.intensities ?? DEFAULT_TREE_INTENSITIES)[level];
    return { maxRestarts, periodMs };
  }

  #toolPoolHandle(): ChildHandle {
    let settle!: (r: ExitReason) => void;
    const exited = new Promise<ExitReason>((r) => (settle = r));
    const end = (reason: ExitReason) => void this.tools.destroy().then(() => settle(reason), (err: unknown) => settle({ kind: 'crash', cause: err }));
    return { exited, stop: () => end({ kind: 'shutdown' }), kill: () => end({ kind: 'killed' }) };
  }

  #observe(event: SupervisorEvent): void {
    this.observer.supervisorEvent(event);
    const { logger } = this.#options;
    switch (event.type) {
      case 'child-restarted':
        this.#restarts++;
        logger.log('info', 'restarted', { supervisor: event.supervisor, child: event.id, after: describeExit(event.reason) });
        return;
      case 'intensity-exceeded':
        logger.log('error', 'restart intensity exceeded', { supervisor: event.supervisor, child: event.id, restarts: event.restarts, maxRestarts: event.maxRestarts, periodMs: event.periodMs });
        return;
      case 'child-start-failed':
        logger.log('error', 'child failed to start', { supervisor: event.supervisor, child: event.id, cause: String((event.cause as Error)?.message ?? event.cause) });
        return;
      default:
        logger.log('debug', event.type, { supervisor: event.supervisor, child: 'id' in event ? event.id : undefined });
    }
  }
}
