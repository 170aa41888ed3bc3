// The harness tasks a node runs detached for 2026-07-28 clients that declared the Tasks extension
// (SEP-2663): one registry per node, beside the sessions' own (session-tasks.ts), because such a task
// outlives the request — and the pooled session — that started it. It is started the way a session's
// task is (conversation, lease, prompt, supervised task actor) but answers nobody: its result stays in
// the store, where `tasks/get` on any node reads it (task-status.ts). The registry only knows which runs
// this node holds, so that `tasks/cancel` can stop one here; a task it does not hold is cancelled in the
// store, which fences its holder (cancelStoredTask).
// A task whose person may be asked (`rounds.ask`), or whose model is its client's (`rounds.sample` on a node
// without one), runs in rounds (task-rounds.ts): a question or a model turn parks it `input_required`, holding
// no lease, thread or slot; `tasks/update` on any node resumes it there from the transcript (task-input.ts),
// and a wait past `TASK_INPUT_WAIT_MS` ends as a round trip's "no answer" does.

import type { Scheduler } from '../actors/scheduler.ts';
import type { HarnessId } from '../harness/ids.ts';
import type { Logger } from '../log/logger.ts';
import type { CreatedTask, Effect, EffectResult } from '../mcp/effects.ts';
import type { AsyncConversationStore } from '../store/async-store.ts';
import { MODEL_SELECTION, selectModelProvider } from '../model/select.ts';
import { ModelError } from '../model/types.ts';
import { ToolError, type ToolExecutor } from '../tools/contract.ts';
import { runTool } from '../tools/tool-runner.ts';
import { type Clock, systemClock } from '../time/clock.ts';
import { isBudgetRefusal, type TaskAllowance } from './principal-budget.ts';
import type { TaskContext } from './task-context.ts';
import { cancelledEntry, type TaskSetup } from './task-core.ts';
import { type ParkedInput, parkedInput, wholeParkedInput } from './task-input.ts';
import { type RoundOutcome, runTaskRound } from './task-rounds.ts';
import { endUnshowableTurn } from './unshowable-turn.ts';
import { ParkedWaits } from './parked-waits.ts';
import { TaskRun } from './task-run.ts';
import { storedSetup } from './task-takeover.ts';
import type { AskResume, TaskAnswer, TurnResume } from '../mcp/effects.ts';
import type { Conversation } from '../store/store.ts';
import { shownTtlMs } from '../store/retention.ts';
import { DEFAULT_MAX_TURNS, MAX_PARKED_QUESTIONS, MAX_PARKED_TASKS_PER_PRINCIPAL, MAX_TURNS_LIMIT, TASK_CLOSE_GRACE_MS, TASK_INPUT_WAIT_MS } from '../limits.ts';

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
  // A parked task runs nowhere: cancelled in the store, in the write that checks it is still parked.
  if (conversation.status !== 'running' && conversation.status !== 'input_required') return 'terminal';
  if ((await detached?.stop(taskId, clock)) === true) return 'stopped';
  const outcome = await store.cancelRunningTask(taskId, principal, cancelledEntry(CANCELLED_BY_CLIENT));
  return outcome === 'cancelled' ? 'fenced' : outcome === 'not-running' ? 'terminal' : 'not-found';
}

/**
 * The `CreateTaskResult`'s times and `ttlMs`, the task having just been claimed (its prompt appended). Its
 * `ttlMs` is its retention counted from the conversation's last update as read before the claim: a new task's
 * is the node's retention itself, a hair less than it is kept (the claim and prompt moved its last update on),
 * never more; a continued conversation's own, or none.
 */
function createdTask(taskId: string, conversation: Pick<Conversation, 'createdAt' | 'updatedAt' | 'ttlMs'>): CreatedTask {
  return { taskId, createdAt: new Date(conversation.createdAt).toISOString(), lastUpdatedAt: new Date(Date.now()).toISOString(), ttlMs: shownTtlMs(conversation) };
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

/** A run this node holds: a supervised task actor's, or a round's of a task that may ask its person. */
interface DetachedRun {
  stop(why: string): void;
  readonly outcome: Promise<unknown>;
}

/** How a round started or resumed here went: it holds the task (its lease), or it ended (or failed) first. */
type RoundStart =
  | { readonly kind: 'claimed'; readonly conversationId: string; readonly conversation: Pick<Conversation, 'createdAt' | 'updatedAt' | 'ttlMs'> }
  | { readonly kind: 'ended'; readonly outcome: RoundOutcome }
  | { readonly kind: 'failed'; readonly message: string };

export interface DetachedTasksOptions {
  /** How long a parked task waits for its person's answer (default `TASK_INPUT_WAIT_MS`). */
  readonly inputWaitMs?: number;
}

export class DetachedTasks {
  /** The runs this node holds, by conversation (= task) id, until each has its outcome. */
  readonly #runs = new Map<string, DetachedRun>();
  /** The tasks this node parked: the timer that ends each wait unanswered, counted by principal. */
  readonly #waits = new ParkedWaits();
  readonly #inputWaitMs: number;

  constructor(options: DetachedTasksOptions = {}) {
    this.#inputWaitMs = options.inputWaitMs ?? TASK_INPUT_WAIT_MS;
  }

  /**
   * Takes a `runTool` whose request declared the Tasks extension, if this node runs it detached: on a model of
   * its own (`SUPERPI_MODEL_URL`…), or on the client's when it declared sampling (each turn then waits
   * `input_required`). `deliver` gets `taskCreated` once it runs, or the tool error that kept it from
   * starting. False: the call runs on its request as any harness_task.
   */
  take(effect: RunToolEffect, deps: DetachedStartDeps, scheduler: Scheduler, deliver: (result: EffectResult) => void): boolean {
    const context = deps.task;
    // Without a model of its own, only a task whose client declared sampling: its client's model takes each
    // turn through tasks/update.
    if (context === undefined || (!serverModel(context.env) && effect.rounds?.sample !== true)) return false;
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
    // A task that may ask its person, or runs on its client's model, runs in rounds, each taking the
    // principal's task slot itself.
    const rounds = effect.rounds;
    if (rounds !== undefined && (rounds.ask || !serverModel(context.env))) return this.#startInRounds(effect, rounds.ask, context, deps);
    const allowance = context.openAllowance?.();
    if (allowance !== undefined && isBudgetRefusal(allowance)) return refused(allowance.refused);
    try {
      const { run, conversation } = await this.#launch(effect, context, deps, scheduler, allowance);
      return { kind: 'taskCreated', ticket, task: createdTask(run.conversationId, conversation) };
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

  /**
   * `tasks/update` of the caller's task: answers to the questions it is parked at (by their keys). Answers to
   * some of several are recorded (parked-questions.ts), the task staying parked at the others; the one that
   * leaves none unanswered — or the answer to its client's model turn — resumes it on this node, the answer
   * waiting until the resume holds the task, so the next `tasks/get` reads `working`. Answers to anything
   * else — a task not parked, a key not pending (stale, duplicate, unknown) — change nothing. False: the task
   * is not the caller's, or does not exist.
   */
  async answer(taskId: string, answers: readonly TaskAnswer[], canAsk: boolean, context: TaskContext, deps: DetachedStartDeps): Promise<boolean> {
    const store = context.store();
    const reader = { local: context.local, forbidWrites: context.forbidWrites, canConfirm: canAsk };
    // Each pass lands this update's answers, or finds that another answer moved the park on first and reads
    // it again: every miss is another answer landing, so the passes are bounded by the questions of a park.
    for (let pass = 0; pass <= MAX_PARKED_QUESTIONS; pass++) {
      const record = await store.taskRecord(taskId, context.principal);
      if (record === null) return pass > 0;
      const { conversation } = record;
      if (conversation.status !== 'input_required') return true;
      const input = await parkedInput(store, record, context.principal, reader);
      if (input === null) return true;
      if (input.kind === 'ask') {
        if (await this.#answerQuestions(conversation, input, answers, canAsk, context, deps)) return true;
        continue;
      }
      // The key says which: a `confirm-…` key's answer was read as the person's, a `sample-…` key's as a model's.
      const answer = answers.find((a) => a.key === input.key);
      if (answer !== undefined && 'sampled' in answer) {
        await this.#resume(conversation, { conversationId: taskId, turn: input.turn, seq: input.seq, answer: answer.sampled }, canAsk, context, deps);
      }
      return true;
    }
    deps.logger.log('warning', 'a task answer kept missing its parked place', { task: taskId });
    return true;
  }

  /**
   * This update's answers to the pending questions of a parked task: each recorded in one conditional write
   * (only while the park still ends where it was read), except the one that answers the last pending
   * question, which resumes the task here (`resumeParkedTask` at that place: of two at once, one wins). True
   * when done (landed, or nothing pending answered: stale, duplicate or unknown keys); false when another
   * answer moved the park on first, so the caller reads it again.
   */
  async #answerQuestions(conversation: Conversation, input: Extract<ParkedInput, { kind: 'ask' }>, answers: readonly TaskAnswer[], canAsk: boolean, context: TaskContext, deps: DetachedStartDeps): Promise<boolean> {
    const store = context.store();
    const given: { key: string; callId: string; person: AskResume['person'] }[] = [];
    for (const q of input.pending) {
      const answer = answers.find((a) => a.key === q.key);
      if (answer !== undefined && 'person' in answer) given.push({ key: q.key, callId: q.callId, person: answer.person });
    }
    if (given.length === 0 && input.pending.length > 0) return true;
    const completes = given.length === input.pending.length;
    let seq = input.lastSeq;
    for (const { key, callId, person } of completes ? given.slice(0, -1) : given) {
      const recorded = await store.recordParkedAnswer(conversation.id, context.principal, seq, { key, id: callId, allowed: person.allowed, refusal: person.refusal });
      if (recorded === null) return false;
      seq = recorded.seq;
      context.transcriptChanged?.(conversation.id);
    }
    if (!completes) return true;
    // The last answer (none when every one was recorded before: that park resumes at any update).
    const person = given.at(-1)?.person ?? this.#unanswered();
    const started = await this.#resume(conversation, { conversationId: conversation.id, turn: input.turn, seq, person }, canAsk, context, deps);
    return !(started.kind === 'ended' && started.outcome.kind === 'stale');
  }

  /**
   * A parked task of the caller's whose wait is over (by the wall clock of this node, from when it parked: the
   * park's `parkedAt`, else `updatedAt`) is resumed here as unanswered: for `tasks/get` on a node other than
   * the one that parked it (and whose timer may have died with it). `timer`: instead, the wait of the park at
   * that seq is over (this node's timer for it fired), and only that park's: a task answered on another node
   * and parked again there waits on. True when it did.
   */
  async expireIfDue(taskId: string, context: TaskContext, deps: DetachedStartDeps, timer?: { readonly seq: number }): Promise<boolean> {
    const store = context.store();
    const record = await store.taskRecord(taskId, context.principal);
    const conversation = record?.conversation;
    if (record === null || conversation?.status !== 'input_required' || (timer === undefined && Date.now() - (record.result?.parkedAt ?? conversation.updatedAt) < this.#inputWaitMs)) return false;
    const reader = { local: context.local, forbidWrites: context.forbidWrites, canConfirm: true };
    // A place a poll cannot tell (past its bound) is found by one whole read: the wait ends whatever the length.
    const input = (await parkedInput(store, record, context.principal, reader)) ?? (await wholeParkedInput(store, record, context.principal, reader));
    if (input === null) return false;
    if (timer !== undefined && input.seq !== timer.seq) {
      deps.logger.log('debug', 'a parked task\'s wait timer was for an earlier park; the task waits at a later place, from when it parked there', { task: taskId, timerSeq: timer.seq, parkedSeq: input.seq });
      return false;
    }
    // Every question not answered yet counts as "no answer"; those answered keep their answers.
    if (input.kind === 'ask') return (await this.#resume(conversation, { conversationId: taskId, turn: input.turn, seq: input.lastSeq, person: this.#unanswered() }, true, context, deps)).kind === 'claimed';
    // A model turn nobody took: as a round trip whose client never came back, the task is left interrupted,
    // continuable with conversation_id.
    const resumed = await store.resumeParkedTask(taskId, context.principal, input.seq);
    if (resumed === null) return false;
    await store.setStatus(taskId, 'interrupted', resumed.lease.epoch);
    context.transcriptChanged?.(taskId);
    return true;
  }

  #unanswered(): AskResume['person'] {
    return { allowed: false, refusal: `the person gave no answer within ${this.#inputWaitMs / 1000} s (TASK_INPUT_WAIT_MS)` };
  }

  /**
   * A parked task resumed here. The model: the client's for a model turn's answer, else this node's own if it
   * has one (a task the client's model ran goes on on it), else the client's. The prompt is the transcript's;
   * the turn limit is the one kept at the first claim (resumeParkedTask).
   */
  async #resume(conversation: Conversation, resume: AskResume | TurnResume, canAsk: boolean, context: TaskContext, deps: DetachedStartDeps): Promise<RoundStart> {
    const harness = conversation.harness as HarnessId;
    const own = !('answer' in resume) && serverModel(context.env);
    return this.#round({ harness }, harness, resume, { canAsk, own }, context, deps, deps.workspace);
  }

  /** The first round of a task run in rounds: answered once its prompt is durable, as any detached task. */
  async #startInRounds(effect: RunToolEffect, canAsk: boolean, context: TaskContext, deps: DetachedStartDeps): Promise<EffectResult> {
    const { ticket } = effect;
    if (await this.#parkedFull(context)) {
      const text = `harness_task refused: principal ${context.principal} has ${this.#waits.count(context.principal)} tasks waiting input_required on this node, the most MAX_PARKED_TASKS_PER_PRINCIPAL (${MAX_PARKED_TASKS_PER_PRINCIPAL}) allows; answer one (tasks/update) or cancel one (tasks/cancel), then try again`;
      return { kind: 'toolDone', ticket, outcome: { text, isError: true } };
    }
    const started = await this.#round(effect.args, effect.harness, null, { canAsk, own: serverModel(context.env) }, context, deps, effect.workspace ?? deps.workspace);
    switch (started.kind) {
      case 'claimed':
        return { kind: 'taskCreated', ticket, task: createdTask(started.conversationId, started.conversation) };
      case 'ended':
        // Refused before it began (budget, an unknown conversation): the synchronous call's tool error.
        return { kind: 'toolDone', ticket, outcome: started.outcome.kind === 'done' ? started.outcome.outcome : { text: started.outcome.kind === 'stale' ? started.outcome.message : 'The task could not start.', isError: true } };
      case 'failed':
        return { kind: 'toolDone', ticket, outcome: { text: started.message, isError: true } };
    }
  }

  /**
   * Runs one round of a task that may ask (task-rounds.ts, on the server's model) in the background: a first
   * round (`resume` null) or the resume of a parked one. Settles once the round holds the task, or once it
   * ended or failed before that. Held in the registry (for `tasks/cancel`) while it runs; parked again at a
   * question, the task gets its wait timer.
   */
  #round(args: Record<string, unknown>, harness: HarnessId, resume: AskResume | TurnResume | null, how: { canAsk: boolean; own: boolean }, context: TaskContext, deps: DetachedStartDeps, workspace: string): Promise<RoundStart> {
    return new Promise<RoundStart>((resolve) => {
      let model;
      try {
        model = how.own ? selectModelProvider({ env: context.env }) : undefined;
      } catch (err) {
        resolve({ kind: 'failed', message: err instanceof ModelError ? err.message : `Internal error: ${(err as Error).message}` });
        return;
      }
      const controller = new AbortController();
      let settle!: () => void;
      const run: DetachedRun = { stop: (why) => controller.abort(new Error(why)), outcome: new Promise<void>((r) => { settle = r; }) };
      let held: string | null = null;
      const clock = deps.clock ?? systemClock;
      const round = runTaskRound({
        context, workspace, toolTimeoutMs: deps.toolTimeoutMs, executeTool: deps.executeTool ?? runTool, logger: deps.logger, clock,
        // Progress has no request to go to: `tasks/get` reads the transcript.
        onProgress: () => undefined, signal: controller.signal, ...(model === undefined ? {} : { model }), canAsk: how.canAsk, awaitsUpdate: true,
        onClaimed: (conversationId, conversation) => {
          held = conversationId;
          this.#endWait(conversationId);
          this.#runs.set(conversationId, run);
          resolve({ kind: 'claimed', conversationId, conversation });
        },
      }, args, harness, resume);
      round.then((outcome) => {
        if (outcome.kind === 'ask' || outcome.kind === 'input') this.#wait(outcome.conversationId, outcome.seq, clock, context, deps);
        else if (outcome.kind === 'stale') deps.logger.log('debug', 'a task answer was stale', { task: resume?.conversationId, message: outcome.message });
        if (outcome.kind === 'input') this.#endIfUnshowable(outcome.conversationId, how.canAsk, context, deps);
        resolve({ kind: 'ended', outcome });
      }, (err: unknown) => {
        // Its lease lapses and another node's takeover continues it from the transcript.
        deps.logger.log('error', 'a detached harness task round failed', { task: held, error: (err as Error).stack ?? String(err) });
        resolve({ kind: 'failed', message: `Internal error: the task round failed: ${(err as Error).message}` });
      }).finally(() => {
        if (held !== null && this.#runs.get(held) === run) this.#runs.delete(held);
        settle();
      });
    });
  }

  /** Parked here at `seq`: unanswered after the wait, the question is resumed as a round trip's "no answer" is. */
  #wait(conversationId: string, seq: number, clock: Clock, context: TaskContext, deps: DetachedStartDeps): void {
    this.#endWait(conversationId);
    const timer = clock.setTimeout(() => {
      this.#waits.fired(conversationId);
      // Its own timer: due whatever the clocks say, for the park it was set for alone. A newer park here set a
      // newer timer; one on another node (the task answered there) has that node's, and waits on.
      void this.expireIfDue(conversationId, context, deps, { seq }).catch((err: unknown) => {
        deps.logger.log('warning', 'a parked task\'s wait could not be ended', { task: conversationId, error: (err as Error).message });
      });
    }, this.#inputWaitMs, { unref: true });
    this.#waits.set(conversationId, context.principal, clock, timer);
  }

  /**
   * Has the caller MAX_PARKED_TASKS_PER_PRINCIPAL tasks waiting here? Under it, nothing is read. At it, each of
   * its waits is checked in the store first, and one whose task no longer waits (answered and gone on on
   * another node, cancelled, ended) is dropped: only tasks still parked keep a new one out.
   */
  async #parkedFull(context: TaskContext): Promise<boolean> {
    const principal = context.principal;
    if (this.#waits.count(principal) < MAX_PARKED_TASKS_PER_PRINCIPAL) return false;
    const store = context.store();
    for (const taskId of this.#waits.of(principal)) {
      if ((await store.getConversation(taskId, principal))?.status !== 'input_required') this.#waits.end(taskId);
    }
    return this.#waits.count(principal) >= MAX_PARKED_TASKS_PER_PRINCIPAL;
  }

  /** Parked here at a client-model turn no poll can show: ended at once rather than left to the wait (unshowable-turn.ts). */
  #endIfUnshowable(conversationId: string, canAsk: boolean, context: TaskContext, deps: DetachedStartDeps): void {
    const reader = { local: context.local, forbidWrites: context.forbidWrites, canConfirm: canAsk };
    void endUnshowableTurn(context.store(), conversationId, context.principal, reader, context.taskStatusChanged).then((ended) => {
      if (ended) this.#endWait(conversationId);
    }, (err: unknown) => {
      deps.logger.log('warning', 'a parked task whose model turn cannot be shown could not be ended; a poll tries again', { task: conversationId, error: (err as Error).message });
    });
  }

  #endWait(conversationId: string): void {
    this.#waits.end(conversationId);
  }

  /** The conversation (new or continued), its prompt appended, then the supervised task actor; as session-tasks.ts does, with nobody to answer. */
  async #launch(effect: RunToolEffect, context: TaskContext, deps: DetachedStartDeps, scheduler: Scheduler, allowance: TaskAllowance | undefined): Promise<{ run: TaskRun; conversation: Conversation }> {
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
      // A new task keeps the node's retention (none by default); a continued conversation keeps its own.
      conversation = await store.createConversation({ principal: context.principal, sessionId: context.sessionId, harness, title: prompt.slice(0, 80), ttlMs: context.taskTtlMs ?? null });
    }
    const conversationId = conversation.id;
    const setup: TaskSetup = {
      conversationId, harness,
      maxTurns: Math.min(typeof args.max_turns === 'number' ? args.max_turns : DEFAULT_MAX_TURNS, MAX_TURNS_LIMIT),
      // A modern client cannot be asked from inside a task: calls under `ask` are refused to a remote caller.
      local: context.local, forbidWrites: context.forbidWrites, canConfirm: false,
    };
    // No request to answer should another node take the task over: its result is read from the store.
    const lease = await store.claimTask(conversationId, storedSetup(setup, { workspace: effect.workspace ?? deps.workspace }));
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
    return { run, conversation };
  }
}
