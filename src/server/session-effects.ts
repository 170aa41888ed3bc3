// What one session's effect runner needs (`EffectDeps`), made per session but holding only the session's
// facts: its tool executor and its harness-task context are built from the application's services on
// first use. An idle session (most of what a server holds) runs no tool and starts no task, and the
// closures both are made of cost ~0.8 KB a session when every session made them at its start (issue 27).
// It is also the session's facts (one object, not two), and makes the owner key on first use: an idle
// anonymous session never needs its random part.

import type { Session } from '../connection/session.ts';
import type { EffectDeps } from '../connection/effect-runner.ts';
import type { Logger } from '../log/logger.ts';
import type { Principal } from '../mcp/state.ts';
import type { DetachedTasks } from '../task/detached-tasks.ts';
import type { TaskContext } from '../task/task-context.ts';
import { principalKey } from './principal-keys.ts';
import type { Clock } from '../time/clock.ts';
import type { ToolExecutor } from '../tools/contract.ts';

/** One session's facts, as the application's services need them. */
export interface SessionFacts {
  /** The session's own id (`session-K`). */
  readonly id: string;
  readonly principal: Principal;
  /** The caller's store owner key (principal-keys.ts), made once per session. */
  readonly ownerKey: string;
  /** Where a node that takes one of its tasks over answers (an HTTP session on a PostgreSQL store). */
  readonly answerTo?: { readonly session: string; readonly principal: string };
  /** Set once the session is made (its effects are made first): what a watched transcript's update is delivered to. */
  session: Session | null;
}

/** What every session's effects are built from: one per application. */
export interface SessionServices {
  readonly workspace: string;
  readonly logger: Logger;
  readonly toolTimeoutMs: number;
  readonly clock: Clock;
  executor(facts: SessionFacts): ToolExecutor;
  taskContext(facts: SessionFacts): TaskContext;
  /** The node's detached harness tasks (2026-07-28 Tasks extension). */
  readonly detached: DetachedTasks;
}

export class SessionEffects implements EffectDeps, SessionFacts {
  readonly id: string;
  readonly principal: Principal;
  readonly answerTo?: { readonly session: string; readonly principal: string };
  session: Session | null = null;
  readonly #services: SessionServices;
  #ownerKey: string | null = null;
  #execute: ToolExecutor | null = null;
  #task: TaskContext | null = null;

  constructor(services: SessionServices, id: string, principal: Principal, answerTo?: { readonly session: string; readonly principal: string }) {
    this.#services = services;
    this.id = id;
    this.principal = principal;
    if (answerTo !== undefined) this.answerTo = answerTo;
  }

  /** Made once, on first use: an anonymous caller's key has a random part, and every use must agree. */
  get ownerKey(): string {
    return (this.#ownerKey ??= principalKey(this.principal, this.id));
  }

  get workspace(): string {
    return this.#services.workspace;
  }

  get logger(): Logger {
    return this.#services.logger;
  }

  get toolTimeoutMs(): number {
    return this.#services.toolTimeoutMs;
  }

  get clock(): Clock {
    return this.#services.clock;
  }

  get executeTool(): ToolExecutor {
    return (this.#execute ??= this.#services.executor(this));
  }

  /** Not for anonymous callers: their conversations are keyed by their session, so no later request could poll one. */
  get detached(): DetachedTasks | undefined {
    return this.principal.kind === 'anonymous' ? undefined : this.#services.detached;
  }

  get task(): TaskContext {
    return (this.#task ??= this.#services.taskContext(this));
  }
}
