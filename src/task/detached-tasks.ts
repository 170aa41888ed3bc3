// The harness tasks a node runs detached for 2026-07-28 clients that declared the Tasks extension
// (SEP-2663): one registry per node, beside the sessions' own (session-tasks.ts), because such a task
// outlives the request — and the pooled session — that started it. It is started the way a session's
// task is (conversation, lease, prompt, supervised task actor) but answers nobody: its result stays in
// the store, where `tasks/get` on any node reads it (task-status.ts). The registry only knows which runs
// this node holds, so that `tasks/cancel` can stop one here; a task it does not hold is cancelled in the
// store, which fences its holder (cancelStoredTask).

import type { Scheduler } from '../actors/scheduler.ts';
import type { HarnessId } from '../harness/ids.ts';
import type { Logger } from '../log/logger.ts';
import type { Effect, EffectResult } from '../mcp/effects.ts';
import type { AsyncConversationStore } from '../store/async-store.ts';
import { MODEL_SELECTION, selectModelProvider } from '../model/select.ts';
import { ModelError } from '../model/types.ts';
import { ToolError, type ToolExecutor } from '../tools/contract.ts';
import { runTool } from '../tools/tool-runner.ts';
import { type Clock, systemClock } from '../time/clock.ts';
import { isBudgetRefusal, type TaskAllowance } from './principal-budget.ts';
import type { TaskContext } from './task-context.ts';
import { cancelledEntry, type TaskSetup } from './task-core.ts';
import { TaskRun } from './task-run.ts';
import { storedSetup } from './task-takeover.ts';
import { DEFAULT_MAX_TURNS, MAX_TURNS_LIMIT, TASK_CLOSE_GRACE_MS } from '../limits.ts';

type RunToolEffect = Extract<Effect, { kind: 'runTool' }>;

/** Why a task stopped by `tasks/cancel` stopped (its transcript's `error` entry and its result say so). */
const CANCELLED_BY_CLIENT = 'the task was cancelled by the client (tasks/cancel)';

/** What a start needs of the session that asks for it (its effects' dependencies: connection/effect-runner.ts `EffectDeps`). */
export interface DetachedStartDeps {
  /** The caller's task context; none: harness tasks are not configured. */
  readonly task?: TaskContext;
  /** The configured workspace, where a task runs unless its effect names the session's chosen root. */
  readonly workspace: string;
  readonly toolTimeoutMs: number;
  readonly executeTool?: ToolExecutor;
  readonly logger: Logger;
  readonly clock?: Clock;
}

/**
 * What `tasks/cancel` found: not the caller's (or none), already over, stopped here, or cancelled in the
 * store while another node (or a synchronous call) runs it: that run is fenced and stops at its next write.
 */
export type CancelOutcome = 'not-found' | 'terminal' | 'stopped' | 'fenced';

/**
 * `tasks/cancel` of the caller's task `taskId`: one read by (id, principal), so another principal's task
 * is not found, as none is. A run this node holds detached is stopped here; any other is cancelled in the
 * store (`cancelRunningTask`), only if it is still running then: one that finished first keeps its status.
 */
export async function cancelStoredTask(store: AsyncConversationStore, principal: string, taskId: string, detached: DetachedTasks | undefined, clock?: Clock): Promise<CancelOutcome> {
  const conversation = await store.getConversation(taskId, principal);
  if (conversation === null) return 'not-found';
  if (conversation.status !== 'running') return 'terminal';
  if ((await detached?.stop(taskId, clock)) === true) return 'stopped';
  const outcome = await store.cancelRunningTask(taskId, principal, cancelledEntry(CANCELLED_BY_CLIENT));
  return outcome === 'cancelled' ? 'fenced' : outcome === 'not-running' ? 'terminal' : 'not-found';
}

/** The node has a model of its own (a half-configured endpoint too: the task reports its configuration error). */
function serverModel(env: NodeJS.ProcessEnv): boolean {
  try {
    selectModelProvider({ env });
    return true;
  } catch (err) {
    return !(err instanceof ModelError && err.provider === MODEL_SELECTION);
  }
}

export class DetachedTasks {
  /** The runs this node holds, by conversation (= task) id, until each has its outcome. */
  readonly #runs = new Map<string, TaskRun>();

  /**
   * Takes a `runTool` whose request declared the Tasks extension, if this node runs it detached: only on a
   * model of its own (`SUPERPI_MODEL_URL`…), as a task on the client's model needs the client at every turn,
   * which round trips (task-rounds.ts) serve instead. `deliver` gets `taskCreated` once it runs, or the
   * tool error that kept it from starting. False: the call runs on its request as any harness_task.
   */
  take(effect: RunToolEffect, deps: DetachedStartDeps, scheduler: Scheduler, deliver: (result: EffectResult) => void): boolean {
    const context = deps.task;
    if (context === undefined || !serverModel(context.env)) return false;
    // Not spread: the session's effects are a class whose fields are getters.
    void this.start(effect, context, deps, scheduler).then(deliver);
    return true;
  }

  /**
   * Starts the task and answers once it runs: `taskCreated`, or `toolDone` with the tool error that kept it
   * from starting (budget, an unknown conversation, another harness), exactly as a synchronous call would.
   * Never rejects.
   */
  async start(effect: RunToolEffect, context: TaskContext, deps: DetachedStartDeps, scheduler: Scheduler): Promise<EffectResult> {
    const { ticket } = effect;
    const refused = (text: string): EffectResult => ({ kind: 'toolDone', ticket, outcome: { text, isError: true } });
    const allowance = context.openAllowance?.();
    if (allowance !== undefined && isBudgetRefusal(allowance)) return refused(allowance.refused);
    try {
      const { run, createdAt } = await this.#launch(effect, context, deps, scheduler, allowance);
      const lastUpdatedAt = new Date(Date.now()).toISOString();
      return { kind: 'taskCreated', ticket, task: { taskId: run.conversationId, createdAt: new Date(createdAt).toISOString(), lastUpdatedAt } };
    } catch (err) {
      allowance?.release();
      if (err instanceof ToolError || err instanceof ModelError) return refused(err.message);
      deps.logger.log('error', 'a detached harness task failed to start', { error: (err as Error).stack ?? String(err) });
      return refused(`Internal error: the task could not start: ${(err as Error).message}`);
    }
  }

  /**
   * `tasks/cancel` of a task the store says is the caller's and running: stopped if this node runs it, the
   * answer waiting (at most `TASK_CLOSE_GRACE_MS`) until it has recorded that, so the next `tasks/get` reads
   * `cancelled`. False: this node does not run it.
   */
  async stop(taskId: string, clock: Clock = systemClock): Promise<boolean> {
    const run = this.#runs.get(taskId);
    if (run === undefined) return false;
    run.stop(CANCELLED_BY_CLIENT);
    let timer: unknown;
    await Promise.race([run.outcome, new Promise<void>((resolve) => { timer = clock.setTimeout(resolve, TASK_CLOSE_GRACE_MS); })]);
    clock.clearTimeout(timer);
    return true;
  }

  /** The conversation (new or continued), its prompt appended, then the supervised task actor; as session-tasks.ts does, with nobody to answer. */
  async #launch(effect: RunToolEffect, context: TaskContext, deps: DetachedStartDeps, scheduler: Scheduler, allowance: TaskAllowance | undefined): Promise<{ run: TaskRun; createdAt: number }> {
    const args = effect.args;
    const harness = args.harness as HarnessId;
    const prompt = String(args.prompt);
    const provider = selectModelProvider({ env: context.env });
    const store = context.store();
    let conversation;
    if (typeof args.conversation_id === 'string') {
      conversation = await store.getConversation(args.conversation_id, context.principal);
      if (!conversation) throw new ToolError(`conversation ${args.conversation_id} not found`);
      if (conversation.harness !== harness) throw new ToolError(`conversation ${args.conversation_id} runs under ${conversation.harness}, not ${harness}`);
    } else {
      conversation = await store.createConversation({ principal: context.principal, sessionId: context.sessionId, harness, title: prompt.slice(0, 80) });
    }
    const conversationId = conversation.id;
    const setup: TaskSetup = {
      conversationId, harness,
      maxTurns: Math.min(typeof args.max_turns === 'number' ? args.max_turns : DEFAULT_MAX_TURNS, MAX_TURNS_LIMIT),
      // A modern client cannot be asked from inside a task: calls under `ask` are refused to a remote caller.
      local: context.local, forbidWrites: context.forbidWrites, canConfirm: false,
    };
    // No request to answer should another node take the task over: its result is read from the store.
    const lease = await store.claimTask(conversationId, storedSetup(setup));
    await store.append(conversationId, 'user', { text: prompt }, lease.epoch);
    const updated = () => context.transcriptChanged?.(conversationId);
    updated();
    const run = new TaskRun({
      setup, principal: context.principal, store, lease,
      ...(context.taskLeaseMs === undefined ? {} : { leaseMs: context.taskLeaseMs }),
      scheduler, provider,
      workspace: effect.workspace ?? deps.workspace,
      executeTool: deps.executeTool ?? runTool, toolTimeoutMs: deps.toolTimeoutMs,
      ...(context.taskWallMs === undefined ? {} : { wallMs: context.taskWallMs }),
      logger: deps.logger,
      ...(deps.clock ? { clock: deps.clock } : {}),
      // Progress has no request to go to: `tasks/get` reads the transcript.
      onProgress: () => undefined,
      onAppend: updated,
      confirm: async () => false,
      ...(allowance === undefined ? {} : { allowance }),
    });
    // A newer run of the same conversation fences this one; the registry keeps the newest.
    this.#runs.set(conversationId, run);
    void run.outcome.then(() => {
      if (this.#runs.get(conversationId) === run) this.#runs.delete(conversationId);
    });
    try {
      await context.supervise(run);
    } catch (err) {
      run.gaveUp(`it could not be started (${(err as Error).message})`);
    }
    return { run, createdAt: conversation.createdAt };
  }
}
