// A 2026-07-28 harness task run in round trips (docs/multi-round-trip.md): its model is its client's, one
// round trip per model turn, or the server's; and a call under an `ask` rule inside it is put to the person
// by a round trip of its own. A round opens (or, on a retry, re-checks and claims) the conversation, drives
// the pure task core (task-core.ts) from the durable transcript — appends, model turns, tool calls — and
// stops where the client must answer (the client's model's turn, or the person's yes or no), parking the
// conversation (`interrupted`, no lease held), or at the end. What the next round needs is in the store
// and in the sealed handle the client carries, so it may reach any node.

import type { CreateMessageRequest, CreateMessageResult } from '@modelcontextprotocol/sdk/types.js';
import { harnessById } from '../harness/catalog.ts';
import type { HarnessId } from '../harness/ids.ts';
import { callerLoadout } from '../harness/policy.ts';
import type { Logger } from '../log/logger.ts';
import type { TaskRounds } from '../mcp/effects.ts';
import { SamplingProvider, toSamplingRequest } from '../model/sampling-convention.ts';
import { type ChatMessage, ModelError, type ModelProvider, type ToolSpec } from '../model/types.ts';
import { StoreError } from '../store/errors.ts';
import type { Conversation, EntryType } from '../store/store.ts';
import type { TaskLease } from '../store/task-lease.ts';
import { toolCatalog } from '../tools/catalog.ts';
import { ToolError, type ToolExecutor, type ToolOutcome, type ToolProgress } from '../tools/contract.ts';
import type { ToolName } from '../tools/definition.ts';
import { type Clock } from '../time/clock.ts';
import { DEFAULT_MAX_TURNS, DEFAULT_TASK_WALL_MS, LEASE_RENEWALS_PER_TERM, MAX_PARKED_QUESTIONS, MAX_TURNS_LIMIT, TASK_LEASE_MS } from '../limits.ts';
import { parkQuestions, type PersonAnswer, questionIn, splitAnswers } from './parked-questions.ts';
import { refuseTask, resumeTask, type TaskAction, type TaskEvent, type TaskSetup, type TaskStep, stepTask } from './task-core.ts';
import { type TaskHistory, taskHistory } from './task-history.ts';
import { forgetHistory, keepHistory, keptHistory, RoundHistory } from './round-history.ts';
import type { TaskContext } from './task-context.ts';
import { isBudgetRefusal, type TaskAllowance } from './principal-budget.ts';
import { taskCaller } from './task-run.ts';
import { storedSetup, workspaceOf } from './task-takeover.ts';
import { currentContent } from './undo.ts';

export interface TaskRoundDeps {
  readonly context: TaskContext;
  readonly workspace: string;
  readonly toolTimeoutMs: number;
  readonly executeTool: ToolExecutor;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly onProgress: (p: ToolProgress) => void;
  /** The call was cancelled: the round records it and ends the task `cancelled`. */
  readonly signal: AbortSignal;
  /**
   * The server's own model, which takes every turn of the round (the client is then asked only the person's
   * questions). Absent: the client's model, asked by round trip.
   */
  readonly model?: ModelProvider;
  /** The client can be asked a form question (`rounds.ask`): a call under `ask` is put to the person. Default false. */
  readonly canAsk?: boolean;
  /**
   * A Tasks-extension task (detached-tasks.ts): a question parks it `input_required` (not `interrupted`),
   * and a resume takes it with `resumeParkedTask`, so of two answers exactly one goes on. Default false.
   */
  readonly awaitsUpdate?: boolean;
  /** The round holds the conversation's lease: its prompt is durable (a first round), or its parked question taken (a resume). */
  readonly onClaimed?: (conversationId: string, conversation: Pick<Conversation, 'createdAt' | 'updatedAt' | 'ttlMs'>) => void;
  /** The most history a round loads (task-history.ts). Default `TASK_HISTORY_MAX_BYTES`. */
  readonly historyMaxBytes?: number;
}

export type RoundOutcome =
  /** The task ended: the call's normal result. */
  | { readonly kind: 'done'; readonly outcome: ToolOutcome }
  /** The task waits for the client's model at `turn`, its transcript ending at `seq`. */
  | { readonly kind: 'input'; readonly conversationId: string; readonly turn: number; readonly seq: number; readonly params: CreateMessageRequest['params'] }
  /** The task waits for the person's yes or no to the next call of model turn `turn` (`message` describes it), its transcript ending at `seq`. */
  | { readonly kind: 'ask'; readonly conversationId: string; readonly turn: number; readonly seq: number; readonly message: string }
  /** The retry is not the conversation's next turn (stale, replayed, or overtaken): -32602, nothing run. */
  | { readonly kind: 'stale'; readonly message: string };

class Stale extends Error {}

/** One round of a harness_task run in round trips: `resume` null for the first call, else a retry's answer. */
export async function runTaskRound(deps: TaskRoundDeps, args: Record<string, unknown>, harness: HarnessId, resume: TaskRounds['resume']): Promise<RoundOutcome> {
  const allowance = deps.context.openAllowance?.();
  if (allowance !== undefined && isBudgetRefusal(allowance)) return { kind: 'done', outcome: { text: allowance.refused, isError: true } };
  try {
    return await new Round(deps, args, harness, allowance).run(resume);
  } catch (err) {
    if (err instanceof Stale) return { kind: 'stale', message: `Invalid params: ${err.message}` };
    if (err instanceof StoreError && err.code === 'fenced') {
      return { kind: 'stale', message: 'Invalid params: another retry of this turn took the conversation over while this one ran; its result is in the transcript' };
    }
    if (err instanceof ToolError) return { kind: 'done', outcome: { text: err.message, isError: true } };
    throw err;
  } finally {
    allowance?.release();
  }
}

class Round {
  readonly #deps: TaskRoundDeps;
  readonly #args: Record<string, unknown>;
  readonly #harness: HarnessId;
  readonly #tools: ToolSpec[];
  #setup!: TaskSetup;
  #lease!: TaskLease;
  /**
   * Where the round's tool calls run: the deps' workspace, except for a parked task resumed (a `tasks/update`,
   * on whichever node): the workspace kept with it at its claim, where it ran until it parked. The answering
   * request's own (its node's configured one) would run the person's confirmed command somewhere else.
   */
  #workspace: string;
  readonly #allowance: TaskAllowance | undefined;
  /** Cancellation, and with the server's model the round's wall time: the round records why and ends `cancelled`. */
  readonly #stop = new AbortController();
  #seq = 0;
  #heartbeat: unknown = null;
  /** The history the round loaded and what it appended since (round-history.ts); null until loaded, or refused. */
  #history: RoundHistory | null = null;

  constructor(deps: TaskRoundDeps, args: Record<string, unknown>, harness: HarnessId, allowance: TaskAllowance | undefined) {
    this.#deps = deps;
    this.#workspace = deps.workspace;
    this.#args = args;
    this.#harness = harness;
    this.#allowance = allowance;
    const { context } = deps;
    this.#tools = roundTools(harness, { local: context.local, forbidWrites: context.forbidWrites, canConfirm: deps.canAsk === true });
  }

  async run(resume: TaskRounds['resume']): Promise<RoundOutcome> {
    const conversationId = resume === null ? await this.#open() : await this.#reopen(resume);
    const { clock, context, signal } = this.#deps;
    const leaseMs = context.taskLeaseMs ?? TASK_LEASE_MS;
    this.#heartbeat = clock.setInterval(() => void this.#renew(), Math.floor(leaseMs / LEASE_RENEWALS_PER_TERM), { unref: true });
    const cancelled = () => this.#stop.abort(new Error('the task was cancelled by the client'));
    if (signal.aborted) cancelled();
    else signal.addEventListener('abort', cancelled, { once: true });
    // The server's model works while the call waits: a round is then bounded by the task's wall time, as a
    // task actor's run is. The client's model is bounded by the client (each round ends at its turn).
    const wallMs = context.taskWallMs ?? DEFAULT_TASK_WALL_MS;
    const wall = this.#deps.model === undefined ? null
      : clock.setTimeout(() => this.#stop.abort(new Error(`the task passed its wall time of ${wallMs / 1000} s`)), wallMs, { unref: true });
    try {
      return await this.#drive(conversationId, resume);
    } finally {
      clock.clearInterval(this.#heartbeat);
      if (wall !== null) clock.clearTimeout(wall);
      signal.removeEventListener('abort', cancelled);
    }
  }

  #setupFor(conversationId: string): TaskSetup {
    const { context } = this.#deps;
    const maxTurns = Math.min(typeof this.#args.max_turns === 'number' ? this.#args.max_turns : DEFAULT_MAX_TURNS, MAX_TURNS_LIMIT);
    return { conversationId, harness: this.#harness, maxTurns, local: context.local, forbidWrites: context.forbidWrites, canConfirm: this.#deps.canAsk === true };
  }

  /** The first round: the conversation (new or continued) claimed and its prompt appended, as a session's task does. */
  async #open(): Promise<string> {
    const { context } = this.#deps;
    const store = context.store();
    const prompt = String(this.#args.prompt);
    let conversation;
    if (typeof this.#args.conversation_id === 'string') {
      conversation = await store.getConversation(this.#args.conversation_id, context.principal);
      if (!conversation) throw new ToolError(`conversation ${this.#args.conversation_id} not found`);
      if (conversation.harness !== this.#harness) throw new ToolError(`conversation ${this.#args.conversation_id} runs under ${conversation.harness}, not ${this.#harness}`);
    } else {
      // Only a Tasks-extension task keeps the node's retention (none by default): a round trip's conversation is kept until deleted.
      const ttlMs = this.#deps.awaitsUpdate === true ? (context.taskTtlMs ?? null) : null;
      conversation = await store.createConversation({ principal: context.principal, sessionId: context.sessionId, harness: this.#harness, title: prompt.slice(0, 80), ttlMs });
    }
    const conversationId = conversation.id;
    this.#setup = this.#setupFor(conversationId);
    this.#lease = await store.claimTask(conversationId, storedSetup(this.#setup, { workspace: this.#deps.workspace }));
    await this.#append('user', { text: prompt });
    this.#deps.onClaimed?.(conversationId, conversation);
    return conversationId;
  }

  /**
   * A retry: the conversation must be the caller's, parked, and still end where the turn was asked.
   * Anything else is a stale or replayed answer, refused before anything is claimed or written.
   */
  async #reopen(resume: NonNullable<TaskRounds['resume']>): Promise<string> {
    const { context } = this.#deps;
    const store = context.store();
    const { conversationId, turn, seq } = resume;
    const conversation = await store.getConversation(conversationId, context.principal);
    if (!conversation) throw new Stale(`conversation ${conversationId} of this model turn is not found`);
    if (this.#deps.awaitsUpdate === true) {
      // One write checks that it is still parked at `seq` and claims it: a second answer finds it running.
      const resumed = await store.resumeParkedTask(conversationId, context.principal, seq);
      if (resumed === null) throw new Stale(`task ${conversationId} no longer waits for the answer at turn ${turn} (already answered, cancelled, or moved on)`);
      const kept = (resumed.setup as { maxTurns?: unknown } | null)?.maxTurns;
      this.#setup = { ...this.#setupFor(conversationId), ...(typeof kept === 'number' && Number.isSafeInteger(kept) && kept > 0 ? { maxTurns: Math.min(kept, MAX_TURNS_LIMIT) } : {}) };
      this.#lease = resumed.lease;
      this.#workspace = workspaceOf(resumed) ?? this.#deps.workspace;
      this.#deps.onClaimed?.(conversationId, conversation);
      this.#deps.context.taskStatusChanged?.(conversationId);
      return conversationId;
    }
    if (conversation.status === 'running') throw new Stale(`turn ${turn} of conversation ${conversationId} is being continued by another request; this retry is a replay`);
    if (conversation.status !== 'interrupted') throw new Stale(`conversation ${conversationId} is ${conversation.status}: turn ${turn} was already answered; call harness_task again without requestState to go on`);
    const last = await store.lastEntry(conversationId);
    if (last?.seq !== seq) throw new Stale(`turn ${turn} of conversation ${conversationId} was already answered (the transcript moved on); this retry is stale or replayed`);
    this.#setup = this.#setupFor(conversationId);
    this.#lease = await store.claimTask(conversationId, storedSetup(this.#setup, { workspace: this.#deps.workspace }));
    return conversationId;
  }

  async #drive(conversationId: string, resume: TaskRounds['resume']): Promise<RoundOutcome> {
    // Bounded (task-history.ts); on the node that served the last round, only what is new since it (round-history.ts).
    const history = await this.#loadHistory(conversationId);
    const entries = 'entries' in history ? history.entries : [];
    if ('entries' in history) this.#history = new RoundHistory(history);
    this.#seq = entries.at(-1)?.seq ?? this.#seq;
    // The answers recorded while it was parked (several questions at once) come after the park: the core
    // resumes from the entries before them.
    const { upToPark, answers: recorded } = splitAnswers(entries);
    // A history past its bound: the round records why and ends the task, whatever it resumes at.
    const refused = 'refused' in history ? history.refused : null;
    let step = refused === null ? resumeTask(this.#setup, upToPark) : refuseTask(this.#setup, refused);
    /** The client model's answer to the turn the round resumes at, until that turn takes it. */
    let answer = resume !== null && 'answer' in resume ? resume.answer : undefined;
    /** The person's answers to the calls the round resumes at, by call id, until each call takes its own. */
    const answers = new Map<string, PersonAnswer>();
    if (resume !== null && refused === null) {
      const waits = 'answer' in resume ? waitsForModel(step, resume.turn) : waitsForPerson(step, resume.turn);
      if (!waits) {
        await this.#park(this.#deps.awaitsUpdate === true ? 'input_required' : 'interrupted');
        const what = 'answer' in resume ? `model turn ${resume.turn}` : `the person's answer at turn ${resume.turn}`;
        throw new Stale(`conversation ${conversationId} does not wait for ${what}; this retry is stale or replayed`);
      }
      if ('person' in resume) {
        // Each question of the park gets its recorded answer; the resume's answer goes to those with none
        // (the last one answered, or every unanswered one when the wait ran out).
        const byCall = new Map(recorded.map((a) => [a.id, a]));
        for (const q of parkQuestions(step, this.#questionsPerPark())) answers.set(q.call.id, byCall.get(q.call.id) ?? resume.person);
      }
    }
    for (;;) {
      let event: TaskEvent | null = null;
      // A call to put to the person: the round stops before its tool_call entry, so the transcript shows
      // no call begun (a resumed core queues it again, rather than taking it for one a crash interrupted).
      const next = questionIn(step);
      const question = next !== undefined && !answers.has(next.call.id) ? next : undefined;
      for (const action of step.actions) {
        if (question !== undefined && action.a === 'append' && action.type === 'tool_call' && action.payload.id === question.call.id) {
          await this.#park(this.#deps.awaitsUpdate === true ? 'input_required' : 'interrupted', step.state);
          return { kind: 'ask', conversationId: this.#setup.conversationId, turn: step.state.turn, seq: this.#seq, message: question.confirm };
        }
        const out = await this.#carryOut(action, answer, answers, step.state);
        if (out === null) continue;
        if ('kind' in out) return out;
        if (action.a === 'model') answer = undefined;
        event = out;
      }
      if (step.state.waiting === 'done') throw new Error('the task core finished without a finish action');
      if (this.#stop.signal.aborted) event = { e: 'stop', why: (this.#stop.signal.reason as Error).message };
      if (event === null) throw new Error('the task core waits for nothing it asked for');
      step = stepTask(step.state, event);
    }
  }

  /**
   * How many questions one park holds: a Tasks-extension task's, every call under `ask` of the model turn
   * (up to MAX_PARKED_QUESTIONS), as `tasks/update` may answer any of them; a round trip's, one, as its
   * `input_required` result asks one question.
   */
  #questionsPerPark(): number {
    return this.#deps.awaitsUpdate === true ? MAX_PARKED_QUESTIONS : 1;
  }

  /** One action: null when nothing comes back, the event to step the core with, or the round's outcome. */
  async #carryOut(action: TaskAction, answer: unknown, answers: Map<string, PersonAnswer>, state: TaskStep['state']): Promise<TaskEvent | RoundOutcome | null> {
    switch (action.a) {
      case 'append':
        await this.#append(action.type, action.payload);
        return null;
      case 'progress':
        this.#deps.onProgress({ progress: action.progress, total: action.total, message: action.message });
        return null;
      case 'model': {
        const request = { system: harnessById(this.#harness).systemPrompt, messages: [...action.messages], tools: this.#tools };
        if (this.#deps.model !== undefined && answer === undefined) return this.#askServerModel(action, request);
        if (answer === undefined) {
          await this.#park(this.#deps.awaitsUpdate === true ? 'input_required' : 'interrupted', { turn: action.turn - 1, toolCalls: state.toolCalls });
          return { kind: 'input', conversationId: this.#setup.conversationId, turn: action.turn, seq: this.#seq, params: turnParams(this.#harness, this.#tools, action.messages) };
        }
        try {
          const reply = await new SamplingProvider(async () => answer as CreateMessageResult).complete(request);
          return { e: 'model', text: reply.text, toolCalls: reply.toolCalls, stopReason: reply.stopReason };
        } catch (err) {
          return { e: 'modelFailed', message: err instanceof ModelError ? err.message : `the client's model answer could not be read: ${(err as Error).message}` };
        }
      }
      case 'tool': {
        const person = answers.get(action.call.id);
        answers.delete(action.call.id);
        return this.#runTool(action, person);
      }
      case 'finish': {
        await this.#deps.context.store().setStatus(this.#setup.conversationId, action.status, this.#lease.epoch, { text: action.text, isError: action.isError, turns: action.turns, toolCalls: action.toolCalls });
        forgetHistory(this.#deps.context.store(), this.#deps.context.principal, this.#setup.conversationId);
        this.#deps.context.taskStatusChanged?.(this.#setup.conversationId);
        const said = action.status === 'completed' ? { answer: action.text } : { message: action.text };
        const structured = { conversation_id: this.#setup.conversationId, harness: this.#harness, status: action.status, turns: action.turns, tool_calls: action.toolCalls, ...said };
        return { kind: 'done', outcome: { text: action.text, isError: action.isError, structured } };
      }
    }
  }

  /** The server's model takes the turn, within the principal's per-minute budget as a task actor's turn does. */
  async #askServerModel(action: Extract<TaskAction, { a: 'model' }>, request: { system: string; messages: ChatMessage[]; tools: ToolSpec[] }): Promise<TaskEvent> {
    const model = this.#deps.model as ModelProvider;
    const signal = this.#stop.signal;
    const waiting = (message: string) => {
      if (!signal.aborted) this.#deps.onProgress({ progress: action.turn, total: this.#setup.maxTurns, message: `turn ${action.turn}: ${message}` });
    };
    const allowance = this.#allowance;
    try {
      await allowance?.admitTurn(signal, waiting);
      const admitRequest = allowance ? (s: AbortSignal) => allowance.admitModelCall(s, waiting) : undefined;
      const reply = await model.complete({ ...request, signal, ...(admitRequest ? { admitRequest } : {}) });
      return { e: 'model', text: reply.text, toolCalls: reply.toolCalls, stopReason: reply.stopReason };
    } catch (err) {
      if (signal.aborted) return { e: 'stop', why: (signal.reason as Error).message };
      return { e: 'modelFailed', message: err instanceof ModelError ? err.message : `the model call failed: ${(err as Error).message}` };
    }
  }

  async #runTool(action: Extract<TaskAction, { a: 'tool' }>, person: PersonAnswer | undefined): Promise<TaskEvent> {
    const { call } = action;
    if (action.confirm !== undefined && person?.allowed !== true) {
      // The round parks before a question it has no answer for (so `person` is the answer to this call), and the core sets
      // `confirm` only when the client can be asked; a refusal is recorded for the model to read.
      const why = person === undefined ? 'the person could not be asked' : person.refusal;
      return { e: 'tool', id: call.id, outcome: { text: `Not run: ${call.name} needs the person's confirmation and ${why}`, isError: true } };
    }
    const { clock, toolTimeoutMs } = this.#deps;
    const workspace = this.#workspace;
    const deadline = new AbortController();
    const timer = clock.setTimeout(() => deadline.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), toolTimeoutMs, { unref: true });
    const signal = AbortSignal.any([this.#stop.signal, deadline.signal]);
    let outcome: ToolOutcome;
    let image: { path: string; before: string | null } | undefined;
    try {
      if (action.snapshot) {
        const path = String(call.arguments.path);
        const kept = action.stored !== undefined && action.stored.path === path ? action.stored : undefined;
        const before = kept !== undefined ? kept.before : await currentContent(workspace, path);
        // Written ahead and committed before the tool may change the file, as a session's task does.
        if (kept === undefined) await this.#append('file_snapshot', { id: call.id, path, before, stage: 'before' });
        image = { path, before };
      }
      const { content: _blocks, ...textual } = await this.#deps.executeTool(call.name as ToolName, call.arguments, this.#harness, { workspace, signal, clock });
      outcome = textual;
    } catch (err) {
      if (err instanceof StoreError) throw err;
      if (err instanceof ToolError) outcome = { text: err.message, isError: true };
      else if (deadline.signal.aborted) outcome = { text: `Stopped: the tool call passed its deadline of ${toolTimeoutMs / 1000} s`, isError: true };
      else outcome = { text: `Internal error in tool ${call.name}: ${(err as Error).message}`, isError: true };
    } finally {
      clock.clearTimeout(timer);
    }
    const after = image !== undefined && !signal.aborted ? await currentContent(workspace, image.path).catch(() => undefined) : undefined;
    return { e: 'tool', id: call.id, outcome, ...(image !== undefined && after !== undefined ? { snapshot: { ...image, after } } : {}) };
  }

  async #append(type: EntryType, payload: Record<string, unknown>): Promise<void> {
    const { context } = this.#deps;
    const entry = await context.store().append(this.#setup.conversationId, type, payload, this.#lease.epoch);
    this.#seq = entry.seq;
    this.#history?.append(entry);
    context.transcriptChanged?.(this.#setup.conversationId);
  }

  /**
   * Waiting for the client: no lease is held, so no node takes the task over and runs it without a model or
   * an answer. `input_required`: a Tasks-extension task's question, answered by `tasks/update`; `taken`, the
   * model turns the run has taken and its calls, is kept with that status (in the row's result, text
   * empty), so that a poll whose bounded read cuts the run numbers its turn right (task-input.ts). An
   * `interrupted` park keeps none: that status's result is what the run finished with.
   */
  async #park(status: 'interrupted' | 'input_required' = 'interrupted', taken?: { readonly turn: number; readonly toolCalls: number }): Promise<void> {
    // `parkedAt`: the wait's start, kept apart from `updatedAt`, which each answer to some of several questions moves.
    const counts = status === 'input_required' && taken !== undefined ? { text: '', isError: false, turns: taken.turn, toolCalls: taken.toolCalls, parkedAt: Date.now() } : undefined;
    const { context } = this.#deps;
    await context.store().setStatus(this.#setup.conversationId, status, this.#lease.epoch, counts);
    // Parked: what the next round of it here needs to read is only what is appended after this.
    if (this.#history !== null) keepHistory(context.store(), context.principal, this.#setup.conversationId, this.#history.loaded());
    // A listener of the task hears it wait (a park appends no entry, so no transcript change would tell it).
    this.#deps.context.taskStatusChanged?.(this.#setup.conversationId);
  }

  async #renew(): Promise<void> {
    try {
      await this.#deps.context.store().renewLease(this.#setup.conversationId, this.#lease.epoch);
    } catch (err) {
      // A fenced renewal shows again at the round's next write, which ends the round.
      this.#deps.logger.log('warning', 'a task round\'s lease could not be renewed', { conversation: this.#setup.conversationId, error: (err as Error).message });
    }
  }

  async #loadHistory(conversationId: string): Promise<TaskHistory> {
    const { context } = this.#deps;
    const store = context.store();
    const known = keptHistory(store, context.principal, conversationId);
    const history = await taskHistory(store, conversationId, context.principal, this.#deps.historyMaxBytes, known);
    if (history === null) throw new Stale(`conversation ${conversationId} is gone from the store`);
    return history;
  }
}

/** The tools a round offers its model: the harness's loadout for the caller, harness_task aside. */
export function roundTools(harness: HarnessId, caller: Pick<TaskSetup, 'local' | 'forbidWrites' | 'canConfirm'>): ToolSpec[] {
  return callerLoadout(harnessById(harness), taskCaller(caller)).filter((t) => t !== 'harness_task')
    .map((t) => ({ name: t, description: toolCatalog[t].description, inputSchema: toolCatalog[t].inputSchema }));
}

/** The `sampling/createMessage` params of a model turn the core asks for: what a round trip's client is sent. */
export function turnParams(harness: HarnessId, tools: ToolSpec[], messages: readonly ChatMessage[]): CreateMessageRequest['params'] {
  return toSamplingRequest({ system: harnessById(harness).systemPrompt, messages: [...messages], tools });
}

/** The core, resumed from the transcript, asks for model turn `turn` and nothing else first. */
export function waitsForModel(step: TaskStep, turn: number): boolean {
  const asks = step.actions.at(-1);
  return asks?.a === 'model' && asks.turn === turn && !step.actions.some((a) => a.a === 'append');
}

/**
 * The core, resumed from the transcript, is at the call a question was parked before: in model turn
 * `turn`, its only write that call's tool_call entry, the call itself one to put to the person.
 */
export function waitsForPerson(step: TaskStep, turn: number): boolean {
  const question = questionIn(step);
  if (question === undefined || step.state.turn !== turn) return false;
  const appends = step.actions.filter((a) => a.a === 'append');
  return appends.length === 1 && appends[0]?.type === 'tool_call' && appends[0].payload.id === question.call.id;
}

export { questionIn } from './parked-questions.ts';
