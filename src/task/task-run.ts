// The host of one harness task on the main thread: it starts the task actor (each incarnation from the
// durable transcript), carries out the actor's actions — entries appended to the store before anything
// else, model requests, tool calls under the policy's questions, progress — and sends the outcomes back.
// The supervisor restarts a crashed or killed actor (transient); the work in flight for the dead
// incarnation is aborted and its late results are dropped, so a restart behaves like a real crash: the
// new incarnation sees only what is durable. The store is asynchronous (it may be a database across the
// network), so the actions are carried out one at a time through one queue: an append has committed
// before the next action runs, and a new incarnation reads the transcript only after its predecessor's
// writes in flight have settled, so it never starts from a transcript that is about to grow.
//
// The run holds the conversation's lease (task-lease.ts) and renews it on a heartbeat; every write names
// the lease's epoch. When the store answers `fenced` (another node took the task over while this one was
// paused or cut off, or a newer run of the conversation claimed it), this node has lost the task: it
// writes nothing more, does not restart the actor, and answers its caller that the task went elsewhere.

import type { ActorRef } from '../actors/actor-ref.ts';
import type { ActorExit } from '../actors/behaviour.ts';
import type { Scheduler } from '../actors/scheduler.ts';
import { type TaskActorArgs, taskBehaviourRef, type TaskMessage } from './task-actor.ts';
import { harnessById } from '../harness/catalog.ts';
import { type Caller, callerLoadout } from '../harness/policy.ts';
import type { ChatMessage, ModelProvider, ToolCall, ToolSpec } from '../model/types.ts';
import { ModelError } from '../model/types.ts';
import type { AsyncConversationStore } from '../store/async-store.ts';
import { StoreError } from '../store/errors.ts';
import { type TaskLease } from '../store/task-lease.ts';
import { LEASE_RENEWALS_PER_TERM, TASK_LEASE_MS } from '../limits.ts';
import { type TaskHistory, taskHistory } from './task-history.ts';
import { interruptedText, type TaskAction, type TaskEvent, type TaskSetup, type TaskStatus, taskStructured } from './task-core.ts';
import { currentContent } from './undo.ts';
import type { BeforeImage, FileSnapshot } from './file-snapshot.ts';
import type { TaskAllowance } from './principal-budget.ts';
import { toolCatalog } from '../tools/catalog.ts';
import { ToolError, type ToolExecutor, type ToolOutcome, type ToolProgress } from '../tools/contract.ts';
import type { ToolName } from '../tools/definition.ts';
import type { Logger } from '../log/logger.ts';
import { retryStatusWrite } from './task-status-retry.ts';
import { type Clock, systemClock } from '../time/clock.ts';
import { DEFAULT_TASK_WALL_MS } from '../limits.ts';

export interface TaskRunDeps {
  readonly setup: TaskSetup;
  /** The store's owner key (the caller's principal), for reading the transcript back. */
  readonly principal: string;
  readonly store: AsyncConversationStore;
  /** The lease this run holds (from `claimTask` or `takeOverTask`): every write names its epoch. */
  readonly lease: TaskLease;
  /** The store's lease term (default `TASK_LEASE_MS`): the run renews it `LEASE_RENEWALS_PER_TERM` times per term. */
  readonly leaseMs?: number;
  readonly scheduler: Scheduler;
  readonly provider: ModelProvider;
  readonly workspace: string;
  readonly executeTool: ToolExecutor;
  /** Deadline of one tool call inside the task. */
  readonly toolTimeoutMs: number;
  readonly wallMs?: number;
  readonly logger: Logger;
  /** Times the wall time and the tool deadlines. Default `systemClock`. */
  readonly clock?: Clock;
  readonly onProgress: (p: ToolProgress) => void;
  /** After every entry appended (transcript subscriptions). */
  readonly onAppend: () => void;
  /** Asks the person (elicitation); only called when the setup says the client can be asked. */
  readonly confirm: (message: string, signal: AbortSignal) => Promise<boolean>;
  /**
   * The task's share of its principal's budget (principal-budget.ts): each turn and each model request
   * waits for it, and the run releases it once answered, however it ended. None: unbudgeted.
   */
  readonly allowance?: TaskAllowance;
  /** The most history the run loads at each start (task-history.ts). Default `TASK_HISTORY_MAX_BYTES`. */
  readonly historyMaxBytes?: number;
}

interface Incarnation {
  readonly actor: ActorRef;
  /** Aborted when this incarnation exits: its model request or tool call stops, its late results are dropped. */
  readonly controller: AbortController;
  /** One of its writes failed: the rest of what it asked for is dropped, so the transcript has no gap. */
  writeFailed: boolean;
}

export class TaskRun {
  readonly conversationId: string;
  /** The harness_task call's answer; settles once. */
  readonly outcome: Promise<ToolOutcome>;
  /** Set when the interrupted status was refused by the store and is being written again (task-status-retry.ts): whether it took. */
  statusRetried: Promise<boolean> | null = null;
  readonly #deps: TaskRunDeps;
  readonly #tools: ToolSpec[];
  #resolve!: (outcome: ToolOutcome) => void;
  #settled = false;
  #current: Incarnation | null = null;
  /**
   * The incarnation whose actions are carried out: the last one started, kept after it exits (its exit
   * may overtake its last actions in the queue), null while the next one is starting.
   */
  #obeyed: Incarnation | null = null;
  /** Why the task must stop (cancel, wall time), once it must. */
  #stopWhy: string | null = null;
  readonly #wall: unknown;
  readonly #clock: Clock;
  #incarnations = 0;
  /** The actions (and the give-up write) in order, each after the one before; it never rejects. */
  #queue: Promise<void> = Promise.resolve();
  #givingUp = false;
  readonly #heartbeat: unknown;
  /** Why this node lost the task (a write was fenced), once it has: nothing more is written or run. */
  #lost: string | null = null;
  /**
   * The run's last status change is under way: it ends the lease, so a renewal racing it is refused —
   * and that refusal says nothing about another holder (the status write itself would be fenced if so).
   */
  #finishing = false;

  constructor(deps: TaskRunDeps) {
    this.#deps = deps;
    this.conversationId = deps.setup.conversationId;
    this.outcome = new Promise((resolve) => (this.#resolve = resolve));
    // The model is offered only what the task may run for its caller: a tool it would be refused costs
    // a turn of the operator's model and teaches it nothing.
    this.#tools = callerLoadout(harnessById(deps.setup.harness), taskCaller(deps.setup)).filter((t) => t !== 'harness_task')
      .map((t) => ({ name: t, description: toolCatalog[t].description, inputSchema: toolCatalog[t].inputSchema }));
    const wallMs = deps.wallMs ?? DEFAULT_TASK_WALL_MS;
    this.#clock = deps.clock ?? systemClock;
    this.#wall = this.#clock.setTimeout(() => this.stop(`the task passed its wall time of ${wallMs / 1000} s`), wallMs, { unref: true });
    this.#heartbeat = this.#clock.setInterval(() => void this.#renew(), Math.floor((deps.leaseMs ?? TASK_LEASE_MS) / LEASE_RENEWALS_PER_TERM), { unref: true });
  }

  /** The epoch this run writes under. */
  get epoch(): number {
    return this.#deps.lease.epoch;
  }

  /**
   * One heartbeat. A store that cannot be reached now is tried again at the next beat (the lease has
   * `LEASE_RENEWALS_PER_TERM` beats in it); a fenced renewal means the task is already someone else's.
   */
  async #renew(): Promise<void> {
    if (this.#settled) return;
    try {
      await this.#deps.store.renewLease(this.conversationId, this.epoch);
    } catch (err) {
      if (isFenced(err)) return this.#finishing ? undefined : this.#fenced(err);
      this.#deps.logger.log('warning', 'a task\'s lease could not be renewed; trying again at the next heartbeat', { conversation: this.conversationId, error: (err as Error).message });
    }
  }

  /**
   * The store refused a write or renewal of this run's epoch: another node (or a newer run) holds the
   * task, or a `tasks/cancel` sent to another node cancelled it (store.ts `cancelRunningTask`). Stop without writing and without a restart: retrying would only be refused again, and the
   * holder continues the transcript from what is durable.
   */
  #fenced(err: StoreError): void {
    if (this.#lost !== null || this.#settled) return;
    this.#lost = err.message;
    this.#deps.logger.log('warning', 'this node lost a task to another holder (its write was fenced); it stops the task here and writes nothing more', {
      conversation: this.conversationId, epoch: this.epoch, reason: err.message,
    });
    const inc = this.#current;
    this.#obeyed = null;
    if (inc) {
      inc.writeFailed = true;
      inc.controller.abort(new Error('this node no longer holds the task'));
    }
    // The store does not say which: a takeover and a cancel sent to another node (tasks/cancel) both move the epoch on.
    const text = `This node stopped the task: it no longer holds it. It was cancelled (tasks/cancel), or another server node took it over (this node's lease lapsed); its result will be in the transcript of conversation ${this.conversationId}.`;
    this.#settle({ text, isError: true, structured: this.#result('running', text, 0, 0) });
  }

  /** The harness the task runs under. */
  get harness(): string {
    return this.#deps.setup.harness;
  }

  /** Times the actor was started (1 + restarts). */
  get incarnations(): number {
    return this.#incarnations;
  }

  get finished(): boolean {
    return this.#settled;
  }

  /** The id of the live task actor, if any (fault injection finds its worker by it). */
  get actorId(): string | null {
    return this.#current?.actor.alive ? this.#current.actor.id : null;
  }

  /** The child start of the task's spec: an incarnation of the task actor from the durable transcript. */
  async start(): Promise<ActorRef> {
    // What the previous incarnation asked for and is not done yet is dropped, as if it had died a little
    // earlier; a write already under way finishes first, so the transcript read below is final.
    this.#obeyed = null;
    await this.#queue;
    const history = await this.#history();
    const entries = 'entries' in history ? history.entries : [];
    const args: TaskActorArgs = { setup: this.#deps.setup, entries, ...('refused' in history ? { refused: history.refused } : {}) };
    const actor = await this.#deps.scheduler.spawn(taskBehaviourRef, args, 'task');
    this.#incarnations++;
    if (this.#incarnations > 1) {
      this.#deps.logger.log('info', 'task actor restarted; continuing from the last durable entry', {
        conversation: this.conversationId, incarnation: this.#incarnations, lastSeq: entries.at(-1)?.seq ?? null,
      });
    }
    const inc: Incarnation = { actor, controller: new AbortController(), writeFailed: false };
    this.#current = inc;
    this.#obeyed = inc;
    actor.onMessage((actions) => this.#enqueue(inc, actions as TaskAction[]));
    void actor.exited.then((reason) => this.#exited(inc, reason));
    actor.cast({ e: 'go' } satisfies TaskMessage);
    if (this.#stopWhy !== null) actor.cast({ e: 'stop', why: this.#stopWhy } satisfies TaskMessage);
    return actor;
  }

  /** Cancellation, the wall time or the session's end: the task records why and finishes `cancelled`. */
  stop(why: string): void {
    if (this.#settled || this.#stopWhy !== null) return;
    this.#stopWhy = why;
    const inc = this.#current;
    if (!inc) return; // between incarnations: the next one is told at its start
    inc.controller.abort(new Error(why));
    inc.actor.cast({ e: 'stop', why } satisfies TaskMessage);
  }

  /** The supervisor gave up on the task (its actor kept dying): the conversation stays resumable. */
  gaveUp(message: string): void {
    if (this.#settled || this.#givingUp) return;
    this.#givingUp = true;
    // Queued, so a finish already on its way is not overwritten by `interrupted` (and answers instead).
    this.#queue = this.#queue.then(() => this.#interrupted(message));
  }

  async #interrupted(message: string): Promise<void> {
    if (this.#settled) return;
    this.#finishing = true;
    const write = () => this.#deps.store.setStatus(this.conversationId, 'interrupted', this.epoch, { text: interruptedText(this.conversationId, message), isError: true, turns: 0, toolCalls: 0 });
    try {
      await write();
    } catch (err) {
      if (isFenced(err)) return this.#fenced(err);
      this.#deps.logger.log('error', 'could not mark an interrupted conversation; trying again while the store refuses it', { conversation: this.conversationId, error: (err as Error).message });
      // Else it reads `running` while this process lives, and a client polling it waits for nothing.
      this.statusRetried = retryStatusWrite({ clock: this.#clock, logger: this.#deps.logger, conversationId: this.conversationId, write });
    }
    const text = interruptedText(this.conversationId, message);
    this.#settle({ text, isError: true, structured: this.#result('interrupted', text, 0, 0) });
  }

  async #history(): Promise<TaskHistory> {
    const history = await taskHistory(this.#deps.store, this.conversationId, this.#deps.principal, this.#deps.historyMaxBytes);
    if (history === null) throw new Error(`conversation ${this.conversationId} is gone from the store`);
    return history;
  }

  #exited(inc: Incarnation, reason: ActorExit): void {
    inc.controller.abort(new Error('the task actor exited'));
    if (this.#current === inc) this.#current = null;
    if (this.#settled) return;
    if (reason.kind === 'normal') {
      // Its finish was dropped after a failed write, and a normal exit is not restarted.
      if (inc.writeFailed) this.gaveUp('its transcript could not be written');
      return;
    }
    if (reason.kind === 'shutdown') {
      // Stopped on purpose (the server is stopping): not restarted, so answered here.
      this.gaveUp('the server stopped the task');
      return;
    }
    const why = reason.kind === 'crash' ? `crashed (${reason.cause.message})` : reason.kind;
    this.#deps.logger.log('warning', 'task actor exited mid-task; its supervisor restarts it', { conversation: this.conversationId, reason: why });
  }

  #enqueue(inc: Incarnation, actions: readonly TaskAction[]): void {
    this.#queue = this.#queue.then(() => this.#carryOut(inc, actions)).catch((err: unknown) => this.#writeFailed(inc, err));
  }

  /**
   * A write the actor asked for failed (the database is unreachable, say): what it decided next may rest
   * on it, so the incarnation is killed and its supervisor starts another from what is durable — which,
   * if the store stays down, fails until the supervisor gives up and the task is answered as interrupted.
   * An actor that already exited normally (its finish was queued) is restarted by nobody: the task is
   * answered as interrupted at once, its transcript kept as far as it was written.
   */
  #writeFailed(inc: Incarnation, err: unknown): void {
    if (isFenced(err)) return this.#fenced(err);
    // The status change did not happen: the lease is still the run's, and a fenced renewal means it again.
    this.#finishing = false;
    const why = (err as Error).message;
    this.#deps.logger.log('error', 'a task\'s store write failed; what its actor asked for next is dropped', { conversation: this.conversationId, error: why });
    inc.writeFailed = true;
    if (this.#current === inc) this.#current = null;
    inc.controller.abort(new Error('a store write failed'));
    if (inc.actor.alive) inc.actor.kill();
    else this.gaveUp(`its transcript could not be written (${why})`);
  }

  /** Actions in order: appends are durable before the next action runs. */
  async #carryOut(inc: Incarnation, actions: readonly TaskAction[]): Promise<void> {
    for (const action of actions) {
      // An incarnation is obeyed until its successor starts (which reads the store once this queue has
      // drained), so one that exited normally still gets its finish carried out; one that is stopping
      // or has exited only records and finishes, its other work being aborted.
      if (this.#obeyed !== inc || inc.writeFailed || this.#lost !== null) return;
      if (inc.controller.signal.aborted && action.a !== 'append' && action.a !== 'finish') continue;
      switch (action.a) {
        case 'append':
          await this.#deps.store.append(this.conversationId, action.type, action.payload, this.epoch);
          this.#deps.onAppend();
          break;
        case 'progress':
          this.#deps.onProgress({ progress: action.progress, total: action.total, message: action.message });
          break;
        case 'model':
          void this.#askModel(inc, action.messages, action.turn);
          break;
        case 'tool':
          void this.#runTool(inc, action.call, action.confirm, action.snapshot, action.stored);
          break;
        case 'finish':
          this.#finishing = true;
          // The answer goes with the status, so `tasks/get` on any node reads it in one row (task-status.ts).
          await this.#deps.store.setStatus(this.conversationId, action.status, this.epoch, { text: action.text, isError: action.isError, turns: action.turns, toolCalls: action.toolCalls });
          this.#settle({ text: action.text, isError: action.isError, structured: this.#result(action.status, action.text, action.turns, action.toolCalls) });
          break;
      }
    }
  }

  /**
   * harness_task's structuredContent (harnessTaskDefinition.outputSchema): everything its text says, for a
   * client that hands the model only structuredContent. A completed task's text is the model's final answer.
   */
  #result(status: TaskStatus | 'running' | 'interrupted', text: string, turns: number, toolCalls: number): Record<string, unknown> {
    return taskStructured(this.conversationId, this.#deps.setup.harness, status, text, turns, toolCalls);
  }

  #settle(outcome: ToolOutcome): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#clock.clearTimeout(this.#wall);
    this.#clock.clearInterval(this.#heartbeat);
    this.#deps.allowance?.release();
    this.#resolve(outcome);
  }

  #answer(inc: Incarnation, event: TaskEvent): void {
    if (this.#current === inc && !inc.controller.signal.aborted) inc.actor.cast(event satisfies TaskMessage);
  }

  async #askModel(inc: Incarnation, messages: readonly ChatMessage[], turn: number): Promise<void> {
    const signal = inc.controller.signal;
    const { allowance } = this.#deps;
    // Past the principal's per-minute budget the turn waits (a cancel or the wall time ends the wait),
    // saying so, rather than failing a task that would succeed a minute later.
    const waiting = (message: string) => {
      if (!signal.aborted) this.#deps.onProgress({ progress: turn, total: this.#deps.setup.maxTurns, message: `turn ${turn}: ${message}` });
    };
    try {
      await allowance?.admitTurn(signal, waiting);
      const admitRequest = allowance ? (s: AbortSignal) => allowance.admitModelCall(s, waiting) : undefined;
      const reply = await this.#deps.provider.complete({ system: harnessById(this.#deps.setup.harness).systemPrompt, messages: [...messages], tools: this.#tools, signal, ...(admitRequest ? { admitRequest } : {}) });
      this.#answer(inc, { e: 'model', text: reply.text, toolCalls: reply.toolCalls, stopReason: reply.stopReason });
    } catch (err) {
      if (signal.aborted) return;
      const message = err instanceof ModelError ? err.message : `the model call failed: ${(err as Error).message}`;
      this.#answer(inc, { e: 'modelFailed', message });
    }
  }

  async #runTool(inc: Incarnation, call: ToolCall, confirm: string | undefined, snapshot: boolean, stored: BeforeImage | undefined): Promise<void> {
    // As AbortSignal.timeout would, but on the task's clock.
    const deadline = new AbortController();
    const timer = this.#clock.setTimeout(() => deadline.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), this.#deps.toolTimeoutMs, { unref: true });
    const signal = AbortSignal.any([inc.controller.signal, deadline.signal]);
    let outcome: ToolOutcome;
    /** What the file held before this call, once that is durable: the call may have changed the file. */
    let image: { readonly path: string; readonly before: string | null } | undefined;
    try {
      if (confirm !== undefined && !(await this.#ask(confirm, signal))) {
        outcome = { text: `Not run: the person did not allow ${call.name}`, isError: true };
      } else {
        if (snapshot) {
          const target = String(call.arguments.path);
          // A re-run of a call that crashed after its before-image keeps that one: the file may already
          // hold this call's own write, which is no original.
          const kept = stored !== undefined && stored.path === target ? stored : undefined;
          const before = kept !== undefined ? kept.before : await currentContent(this.#deps.workspace, target);
          if (kept === undefined && !(await this.#writeAhead(inc, { id: call.id, path: target, before, stage: 'before' }))) return;
          image = { path: target, before };
        }
        // The model gets the text only (task-core keeps `text` for the transcript and the turn): an image block
        // (read's) is dropped here, so megabytes of base64 never cross to the task actor's thread.
        const { content: _blocks, ...textual } = await this.#deps.executeTool(call.name as ToolName, call.arguments, this.#deps.setup.harness, { workspace: this.#deps.workspace, signal, clock: this.#clock });
        outcome = textual;
      }
    } catch (err) {
      if (inc.controller.signal.aborted) return;
      if (err instanceof ToolError) outcome = { text: err.message, isError: true };
      else if (signal.aborted) outcome = { text: `Stopped: the tool call passed its deadline of ${this.#deps.toolTimeoutMs / 1000} s`, isError: true };
      else outcome = { text: `Internal error in tool ${call.name}: ${(err as Error).message}`, isError: true };
    } finally {
      this.#clock.clearTimeout(timer);
    }
    // Failed calls are completed too (after = before, nothing to undo), so undo does not take them for
    // interrupted ones; a call stopped by its deadline may still be writing: its result stays unknown.
    const taken = image !== undefined && !signal.aborted ? await this.#afterImage(image) : undefined;
    if (inc.controller.signal.aborted) return;
    this.#answer(inc, { e: 'tool', id: call.id, outcome, ...(taken ? { snapshot: taken } : {}) });
  }

  /** The completed snapshot, or undefined when the file cannot be read now (undo then restores the before-image). */
  async #afterImage(image: { readonly path: string; readonly before: string | null }): Promise<FileSnapshot | undefined> {
    try {
      return { ...image, after: await currentContent(this.#deps.workspace, image.path) };
    } catch (err) {
      this.#deps.logger.log('warning', 'a changed file could not be read for its after-image; undo will restore its before-image', { conversation: this.conversationId, error: (err as Error).message });
      return undefined;
    }
  }

  /**
   * Appends a before-image through the action queue (so a new incarnation reads the transcript only
   * after it settled) and waits until it is committed: the tool may change the file only then. False
   * when the incarnation was superseded or the write failed (then handled as any failed write): the
   * tool is not run.
   */
  async #writeAhead(inc: Incarnation, image: BeforeImage): Promise<boolean> {
    const written = this.#queue.then(async () => {
      if (this.#obeyed !== inc || inc.writeFailed || this.#lost !== null || inc.controller.signal.aborted) return false;
      await this.#deps.store.append(this.conversationId, 'file_snapshot', image, this.epoch);
      this.#deps.onAppend();
      return true;
    });
    this.#queue = written.then(() => undefined, (err: unknown) => this.#writeFailed(inc, err));
    try {
      return await written;
    } catch {
      // Already handled in the queue (#writeFailed): the incarnation is aborted and restarted.
      return false;
    }
  }

  async #ask(message: string, signal: AbortSignal): Promise<boolean> {
    try {
      return await this.#deps.confirm(message, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      throw new ToolError(`Not run: the person could not be asked (${(err as Error).message})`);
    }
  }
}

/**
 * The task's caller as the permission rules see it: the local user (whose host confirmed the task), an
 * anonymous caller without the operator's write opt-in, or a remote caller who can be asked or not.
 * Tasks start no tasks, so the anonymous-tasks opt-in does not matter here.
 */
export function taskCaller(setup: Pick<TaskSetup, 'local' | 'forbidWrites' | 'canConfirm'>): Caller {
  return {
    kind: setup.local ? 'local' : setup.forbidWrites ? 'anonymous' : 'token',
    canElicit: setup.canConfirm,
    allowAnonymousWrites: !setup.forbidWrites,
    allowAnonymousTasks: false,
  };
}

function isFenced(err: unknown): err is StoreError {
  return err instanceof StoreError && err.code === 'fenced';
}
