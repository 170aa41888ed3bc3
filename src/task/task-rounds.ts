// A 2026-07-28 harness task whose model is its client's, one round trip per model turn
// (docs/multi-round-trip.md): a round opens (or, on a retry, re-checks and claims) the conversation, drives
// the pure task core (task-core.ts) from the durable transcript — appends, tool calls — and stops at the
// next model turn, parking the conversation (`interrupted`, no lease held) for the client's answer, or at
// the end. What the next round needs is in the store and in the sealed handle the client carries, so it
// may reach any node.

import type { CreateMessageRequest, CreateMessageResult } from '@modelcontextprotocol/sdk/types.js';
import { harnessById } from '../harness/catalog.ts';
import type { HarnessId } from '../harness/ids.ts';
import { callerLoadout } from '../harness/policy.ts';
import type { Logger } from '../log/logger.ts';
import type { TaskRounds } from '../mcp/effects.ts';
import { SamplingProvider, toSamplingRequest } from '../model/sampling-convention.ts';
import { ModelError, type ToolSpec } from '../model/types.ts';
import { StoreError } from '../store/errors.ts';
import { type Entry, type EntryType, MAX_ENTRIES_LIMIT } from '../store/store.ts';
import type { TaskLease } from '../store/task-lease.ts';
import { toolCatalog } from '../tools/catalog.ts';
import { ToolError, type ToolExecutor, type ToolOutcome, type ToolProgress } from '../tools/contract.ts';
import type { ToolName } from '../tools/definition.ts';
import { type Clock } from '../time/clock.ts';
import { DEFAULT_MAX_TURNS, LEASE_RENEWALS_PER_TERM, MAX_TURNS_LIMIT, TASK_LEASE_MS } from '../limits.ts';
import { type TaskAction, type TaskEvent, type TaskSetup, resumeTask, stepTask } from './task-core.ts';
import type { TaskContext } from './task-context.ts';
import { isBudgetRefusal } from './principal-budget.ts';
import { taskCaller } from './task-run.ts';
import { storedSetup } from './task-takeover.ts';
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
}

export type RoundOutcome =
  /** The task ended: the call's normal result. */
  | { readonly kind: 'done'; readonly outcome: ToolOutcome }
  /** The task waits for the client's model at `turn`, its transcript ending at `seq`. */
  | { readonly kind: 'input'; readonly conversationId: string; readonly turn: number; readonly seq: number; readonly params: CreateMessageRequest['params'] }
  /** The retry is not the conversation's next turn (stale, replayed, or overtaken): -32602, nothing run. */
  | { readonly kind: 'stale'; readonly message: string };

class Stale extends Error {}

/** One round of a harness_task sampled by round trip: `resume` null for the first call, else a retry's answer. */
export async function runTaskRound(deps: TaskRoundDeps, args: Record<string, unknown>, harness: HarnessId, resume: TaskRounds['resume']): Promise<RoundOutcome> {
  const allowance = deps.context.openAllowance?.();
  if (allowance !== undefined && isBudgetRefusal(allowance)) return { kind: 'done', outcome: { text: allowance.refused, isError: true } };
  try {
    return await new Round(deps, args, harness).run(resume);
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
  #seq = 0;
  #heartbeat: unknown = null;

  constructor(deps: TaskRoundDeps, args: Record<string, unknown>, harness: HarnessId) {
    this.#deps = deps;
    this.#args = args;
    this.#harness = harness;
    const { context } = deps;
    const loadout = callerLoadout(harnessById(harness), taskCaller({ local: context.local, forbidWrites: context.forbidWrites, canConfirm: false }));
    this.#tools = loadout.filter((t) => t !== 'harness_task')
      .map((t) => ({ name: t, description: toolCatalog[t].description, inputSchema: toolCatalog[t].inputSchema }));
  }

  async run(resume: TaskRounds['resume']): Promise<RoundOutcome> {
    const conversationId = resume === null ? await this.#open() : await this.#reopen(resume);
    const leaseMs = this.#deps.context.taskLeaseMs ?? TASK_LEASE_MS;
    this.#heartbeat = this.#deps.clock.setInterval(() => void this.#renew(), Math.floor(leaseMs / LEASE_RENEWALS_PER_TERM), { unref: true });
    try {
      return await this.#drive(conversationId, resume);
    } finally {
      this.#deps.clock.clearInterval(this.#heartbeat);
    }
  }

  #setupFor(conversationId: string): TaskSetup {
    const { context } = this.#deps;
    const maxTurns = Math.min(typeof this.#args.max_turns === 'number' ? this.#args.max_turns : DEFAULT_MAX_TURNS, MAX_TURNS_LIMIT);
    return { conversationId, harness: this.#harness, maxTurns, local: context.local, forbidWrites: context.forbidWrites, canConfirm: false };
  }

  /** The first round: the conversation (new or continued) claimed and its prompt appended, as a session's task does. */
  async #open(): Promise<string> {
    const { context } = this.#deps;
    const store = context.store();
    const prompt = String(this.#args.prompt);
    let conversationId: string;
    if (typeof this.#args.conversation_id === 'string') {
      const conversation = await store.getConversation(this.#args.conversation_id, context.principal);
      if (!conversation) throw new ToolError(`conversation ${this.#args.conversation_id} not found`);
      if (conversation.harness !== this.#harness) throw new ToolError(`conversation ${this.#args.conversation_id} runs under ${conversation.harness}, not ${this.#harness}`);
      conversationId = conversation.id;
    } else {
      conversationId = (await store.createConversation({ principal: context.principal, sessionId: context.sessionId, harness: this.#harness, title: prompt.slice(0, 80) })).id;
    }
    this.#setup = this.#setupFor(conversationId);
    this.#lease = await store.claimTask(conversationId, storedSetup(this.#setup));
    await this.#append('user', { text: prompt });
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
    if (conversation.status === 'running') throw new Stale(`turn ${turn} of conversation ${conversationId} is being continued by another request; this retry is a replay`);
    if (conversation.status !== 'interrupted') throw new Stale(`conversation ${conversationId} is ${conversation.status}: turn ${turn} was already answered; call harness_task again without requestState to go on`);
    const last = await store.lastEntry(conversationId);
    if (last?.seq !== seq) throw new Stale(`turn ${turn} of conversation ${conversationId} was already answered (the transcript moved on); this retry is stale or replayed`);
    this.#setup = this.#setupFor(conversationId);
    this.#lease = await store.claimTask(conversationId, storedSetup(this.#setup));
    return conversationId;
  }

  async #drive(conversationId: string, resume: TaskRounds['resume']): Promise<RoundOutcome> {
    const entries = await this.#transcript(conversationId);
    this.#seq = entries.at(-1)?.seq ?? this.#seq;
    let step = resumeTask(this.#setup, entries);
    let answer = resume === null ? undefined : resume.answer;
    if (resume !== null) {
      const asks = step.actions.at(-1);
      if (asks?.a !== 'model' || asks.turn !== resume.turn || step.actions.some((a) => a.a === 'append')) {
        await this.#park();
        throw new Stale(`conversation ${conversationId} does not wait for model turn ${resume.turn}; this retry is stale or replayed`);
      }
    }
    for (;;) {
      let event: TaskEvent | null = null;
      for (const action of step.actions) {
        const out = await this.#carryOut(action, answer);
        if (out === null) continue;
        if ('kind' in out) return out;
        if (action.a === 'model') answer = undefined;
        event = out;
      }
      if (step.state.waiting === 'done') throw new Error('the task core finished without a finish action');
      if (this.#deps.signal.aborted) event = { e: 'stop', why: 'the task was cancelled by the client' };
      if (event === null) throw new Error('the task core waits for nothing it asked for');
      step = stepTask(step.state, event);
    }
  }

  /** One action: null when nothing comes back, the event to step the core with, or the round's outcome. */
  async #carryOut(action: TaskAction, answer: unknown): Promise<TaskEvent | RoundOutcome | null> {
    switch (action.a) {
      case 'append':
        await this.#append(action.type, action.payload);
        return null;
      case 'progress':
        this.#deps.onProgress({ progress: action.progress, total: action.total, message: action.message });
        return null;
      case 'model': {
        const request = { system: harnessById(this.#harness).systemPrompt, messages: [...action.messages], tools: this.#tools };
        if (answer === undefined) {
          await this.#park();
          return { kind: 'input', conversationId: this.#setup.conversationId, turn: action.turn, seq: this.#seq, params: toSamplingRequest(request) };
        }
        try {
          const reply = await new SamplingProvider(async () => answer as CreateMessageResult).complete(request);
          return { e: 'model', text: reply.text, toolCalls: reply.toolCalls, stopReason: reply.stopReason };
        } catch (err) {
          return { e: 'modelFailed', message: err instanceof ModelError ? err.message : `the client's model answer could not be read: ${(err as Error).message}` };
        }
      }
      case 'tool':
        return this.#runTool(action);
      case 'finish': {
        await this.#deps.context.store().setStatus(this.#setup.conversationId, action.status, this.#lease.epoch);
        const said = action.status === 'completed' ? { answer: action.text } : { message: action.text };
        const structured = { conversation_id: this.#setup.conversationId, harness: this.#harness, status: action.status, turns: action.turns, tool_calls: action.toolCalls, ...said };
        return { kind: 'done', outcome: { text: action.text, isError: action.isError, structured } };
      }
    }
  }

  async #runTool(action: Extract<TaskAction, { a: 'tool' }>): Promise<TaskEvent> {
    const { call } = action;
    // A modern client cannot be asked by a server request; the core never sets `confirm` without elicitation.
    if (action.confirm !== undefined) return { e: 'tool', id: call.id, outcome: { text: `Not run: ${call.name} needs the person's confirmation, which this client cannot be asked for`, isError: true } };
    const { clock, toolTimeoutMs, workspace } = this.#deps;
    const deadline = new AbortController();
    const timer = clock.setTimeout(() => deadline.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), toolTimeoutMs, { unref: true });
    const signal = AbortSignal.any([this.#deps.signal, deadline.signal]);
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
    context.transcriptChanged?.(this.#setup.conversationId);
  }

  /** Waiting for the client: no lease is held, so no node takes the task over and runs it without a model. */
  async #park(): Promise<void> {
    await this.#deps.context.store().setStatus(this.#setup.conversationId, 'interrupted', this.#lease.epoch);
  }

  async #renew(): Promise<void> {
    try {
      await this.#deps.context.store().renewLease(this.#setup.conversationId, this.#lease.epoch);
    } catch (err) {
      // A fenced renewal shows again at the round's next write, which ends the round.
      this.#deps.logger.log('warning', 'a task round\'s lease could not be renewed', { conversation: this.#setup.conversationId, error: (err as Error).message });
    }
  }

  async #transcript(conversationId: string): Promise<Entry[]> {
    const { context } = this.#deps;
    const all: Entry[] = [];
    for (;;) {
      const page = await context.store().entries(conversationId, context.principal, { afterSeq: all.at(-1)?.seq ?? 0, limit: MAX_ENTRIES_LIMIT });
      if (page === null) throw new Stale(`conversation ${conversationId} is gone from the store`);
      all.push(...page);
      if (page.length < MAX_ENTRIES_LIMIT) return all;
    }
  }
}
