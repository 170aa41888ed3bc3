// The harness tasks of one session. A task is its own supervised actor, so it outlives the session's
// connection actor: this registry (on the main thread, beside the session) owns each task's request —
// its answer, progress and transcript updates go to whichever connection actor is current — and the
// questions a task asks the client (sampling, elicitation), which are asked again if the connection
// actor restarts while one is open.

import type { CreateMessageResult } from '@modelcontextprotocol/sdk/types.js';
import type { Scheduler } from '../actors/scheduler.ts';
import type { HarnessId } from '../harness/ids.ts';
import type { Effect, EffectResult, TaskRounds } from '../mcp/effects.ts';
import { confirmationRequest, isAllowed } from '../mcp/confirmation.ts';
import { ErrorCode, idKey } from '../mcp/jsonrpc.ts';
import { transcriptUri } from '../mcp/resources.ts';
import { MODEL_SELECTION, selectModelProvider } from '../model/select.ts';
import { ModelError, type ModelProvider } from '../model/types.ts';
import { ToolError, type ToolExecutor, type ToolOutcome, type ToolProgress } from '../tools/contract.ts';
import type { TaskContext } from './task-context.ts';
import type { Logger } from '../log/logger.ts';
import { type Clock, systemClock } from '../time/clock.ts';
import { TaskRun } from './task-run.ts';
import { runTaskRound } from './task-rounds.ts';
import { DEFAULT_MAX_TURNS, MAX_TURNS_LIMIT, TASK_CLOSE_GRACE_MS } from '../limits.ts';
import type { TaskSetup } from './task-core.ts';
import { storedSetup } from './task-takeover.ts';
import { isBudgetRefusal, type TaskAllowance } from './principal-budget.ts';

type RunToolEffect = Extract<Effect, { kind: 'runTool' }>;

const CANCELLED = 'the task was cancelled by the client';

export interface SessionTasksDeps {
  readonly context: TaskContext;
  readonly scheduler: Scheduler;
  readonly workspace: string;
  readonly toolTimeoutMs: number;
  readonly executeTool: ToolExecutor;
  readonly logger: Logger;
  /** Times the close grace and each task's waits. Default `systemClock`. */
  readonly clock?: Clock;
  /** To the session's current connection actor (held while it restarts). */
  readonly deliver: (result: EffectResult) => void;
}

interface Ask {
  readonly ticket: number;
  readonly key: number;
  readonly method: 'sampling/createMessage' | 'elicitation/create';
  readonly params: unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: Error) => void;
}

export class SessionTasks {
  readonly #deps: SessionTasksDeps;
  /**
   * Tasks by the ticket of their harness_task call, from the start until the answer has left as a reply:
   * an outcome delivered to a connection actor that died before replying is delivered again to the next.
   */
  readonly #tasks = new Map<number, { readonly requestKey: string; run: TaskRun | null; stopped: string | null; outcome: ToolOutcome | null }>();
  readonly #asks = new Map<string, Ask>();
  /** Rounds of tasks sampled by round trip, by ticket, until their answer has left as a reply. */
  readonly #rounds = new Map<number, { readonly requestKey: string; readonly controller: AbortController; result: EffectResult | null }>();
  #nextKey = 1;

  constructor(deps: SessionTasksDeps) {
    this.#deps = deps;
  }

  get running(): TaskRun[] {
    return [...this.#tasks.values()].flatMap((t) => (t.run && t.outcome === null ? [t.run] : []));
  }

  /** True when a task answers this request (it is not answered for when the connection actor dies). */
  ownsRequest(key: string): boolean {
    for (const t of this.#tasks.values()) if (t.requestKey === key) return true;
    for (const r of this.#rounds.values()) if (r.requestKey === key) return true;
    return false;
  }

  /** A reply to this request has been sent: a task that answered it is done with. */
  replied(key: string): void {
    for (const [ticket, t] of this.#tasks) if (t.requestKey === key && t.outcome !== null) this.#tasks.delete(ticket);
    for (const [ticket, r] of this.#rounds) if (r.requestKey === key && r.result !== null) this.#rounds.delete(ticket);
  }

  /** Takes the effects that belong to tasks; false: someone else runs it. */
  take(effect: Effect): boolean {
    switch (effect.kind) {
      case 'runTool':
        if (effect.tool !== 'harness_task' || effect.args.undo === true) return false;
        if (effect.rounds !== undefined) {
          // In round trips: a retry; the client's model, when the server has none; or the server's model
          // with the person asked from inside the task (a task actor could not stop to ask a modern client).
          const { rounds } = effect;
          const serverModel = this.#serverModel();
          if (rounds.resume !== null || (serverModel ? rounds.ask : rounds.sample)) {
            this.#round(effect, rounds, serverModel);
            return true;
          }
        }
        this.#start(effect);
        return true;
      case 'cancel': {
        const round = this.#rounds.get(effect.ticket);
        if (round) {
          round.controller.abort(new Error(CANCELLED));
          return true;
        }
        const task = this.#tasks.get(effect.ticket);
        if (!task) return false;
        task.stopped = CANCELLED;
        task.run?.stop(task.stopped);
        return true;
      }
      case 'clientResponse': {
        const id = `${effect.ticket}:${effect.key}`;
        const ask = this.#asks.get(id);
        if (!ask) return false;
        this.#asks.delete(id);
        if (effect.error) ask.reject(new Error(`the client answered ${effect.error.code}: ${effect.error.message}`));
        else ask.resolve(effect.result);
        return true;
      }
      default:
        return false;
    }
  }

  /**
   * The connection actor restarted: answers it may have lost are delivered again, and the questions still
   * open (which it does not know) are asked again.
   */
  resume(): void {
    for (const [ticket, t] of this.#tasks) if (t.outcome !== null) this.#deps.deliver({ kind: 'toolDone', ticket, outcome: t.outcome });
    for (const r of this.#rounds.values()) if (r.result !== null) this.#deps.deliver(r.result);
    for (const ask of this.#asks.values()) {
      this.#deps.deliver({ kind: 'clientRequest', ticket: ask.ticket, key: ask.key, method: ask.method, params: ask.params });
    }
  }

  /** Stops every task (each records that it was stopped) and waits for them, at most `graceMs`. */
  async close(why: string, graceMs = TASK_CLOSE_GRACE_MS): Promise<void> {
    for (const t of this.#tasks.values()) t.stopped ??= why;
    for (const r of this.#rounds.values()) r.controller.abort(new Error(why));
    const runs = this.running;
    for (const run of runs) run.stop(why);
    if (runs.length === 0) return;
    const clock = this.#deps.clock ?? systemClock;
    let timer: unknown;
    await Promise.race([Promise.all(runs.map((r) => r.outcome)), new Promise<void>((r) => { timer = clock.setTimeout(r, graceMs); })]);
    clock.clearTimeout(timer);
  }

  #start(effect: RunToolEffect): void {
    const { ticket } = effect;
    const entry = { requestKey: idKey(effect.requestId), run: null as TaskRun | null, stopped: null as string | null, outcome: null as ToolOutcome | null };
    this.#tasks.set(ticket, entry);
    const done = (outcome: ToolOutcome) => {
      entry.outcome = outcome;
      // A cancelled call gets no reply: nothing to wait for.
      if (entry.stopped === CANCELLED) this.#tasks.delete(ticket);
      for (const [id, ask] of this.#asks) if (ask.ticket === ticket) this.#asks.delete(id);
      this.#deps.deliver({ kind: 'toolDone', ticket, outcome });
    };
    // Refused before anything is written: past the cap the call costs the operator nothing.
    const allowance = this.#deps.context.openAllowance?.();
    if (allowance !== undefined && isBudgetRefusal(allowance)) return done({ text: allowance.refused, isError: true });
    this.#launch(effect, allowance).then((run) => {
      entry.run = run;
      if (entry.stopped !== null) run.stop(entry.stopped);
      void run.outcome.then(done);
    }, (err: unknown) => {
      // The run never began (or could not be supervised and already answered): its slot is free either way.
      allowance?.release();
      if (err instanceof ToolError || err instanceof ModelError) return done({ text: err.message, isError: true });
      this.#deps.logger.log('error', 'harness task failed to start', { error: (err as Error).stack ?? String(err) });
      done({ text: `Internal error: the task could not start: ${(err as Error).message}`, isError: true });
    });
  }

  /** The conversation (new or continued), its prompt appended, then the supervised task actor. */
  async #launch(effect: RunToolEffect, allowance: TaskAllowance | undefined): Promise<TaskRun> {
    const { context } = this.#deps;
    const args = effect.args;
    const harness = args.harness as HarnessId;
    const prompt = String(args.prompt);
    const provider = this.#provider(effect);
    const store = context.store();
    let conversationId: string;
    if (typeof args.conversation_id === 'string') {
      const conversation = await store.getConversation(args.conversation_id, context.principal);
      if (!conversation) throw new ToolError(`conversation ${args.conversation_id} not found`);
      if (conversation.harness !== harness) throw new ToolError(`conversation ${args.conversation_id} runs under ${conversation.harness}, not ${harness}`);
      conversationId = conversation.id;
    } else {
      conversationId = (await store.createConversation({ principal: context.principal, sessionId: context.sessionId, harness, title: prompt.slice(0, 80) })).id;
    }
    const setup: TaskSetup = {
      conversationId, harness,
      maxTurns: Math.min(typeof args.max_turns === 'number' ? args.max_turns : DEFAULT_MAX_TURNS, MAX_TURNS_LIMIT),
      local: context.local, forbidWrites: context.forbidWrites, canConfirm: effect.client.elicitation,
    };
    // This node holds the task from now on (any earlier run of the conversation is fenced), and keeps
    // what another node needs to continue it should this one die.
    const answers = context.answerTo === undefined ? undefined : { ...context.answerTo, request: effect.requestId };
    const lease = await store.claimTask(conversationId, storedSetup(setup, { answers, workspace: effect.workspace ?? this.#deps.workspace }));
    // The prompt is durable before the first actor starts: every incarnation starts from the store.
    await store.append(conversationId, 'user', { text: prompt }, lease.epoch);
    // Every session subscribed to the transcript hears, whichever started the task.
    const updated = context.transcriptChanged
      ? () => context.transcriptChanged?.(conversationId)
      : () => this.#deps.deliver({ kind: 'resourceUpdated', uri: transcriptUri(conversationId) });
    updated();
    const { ticket } = effect;
    const run = new TaskRun({
      setup,
      principal: context.principal,
      store,
      lease,
      ...(context.taskLeaseMs === undefined ? {} : { leaseMs: context.taskLeaseMs }),
      scheduler: this.#deps.scheduler,
      provider,
      workspace: effect.workspace ?? this.#deps.workspace,
      executeTool: this.#deps.executeTool,
      toolTimeoutMs: this.#deps.toolTimeoutMs,
      ...(context.taskWallMs === undefined ? {} : { wallMs: context.taskWallMs }),
      logger: this.#deps.logger,
      ...(this.#deps.clock ? { clock: this.#deps.clock } : {}),
      onProgress: (progress) => this.#deps.deliver({ kind: 'toolProgress', ticket, progress }),
      onAppend: updated,
      confirm: async (message, signal) => {
        return isAllowed(await this.#ask(ticket, 'elicitation/create', confirmationRequest(message), signal));
      },
      ...(allowance === undefined ? {} : { allowance }),
    });
    try {
      await context.supervise(run);
    } catch (err) {
      run.gaveUp(`it could not be started (${(err as Error).message})`);
    }
    return run;
  }

  /** The server has a model of its own (SUPERPI_MODEL_URL…): preferred to the client's, 2026-07-28 deprecating sampling. */
  #serverModel(): boolean {
    try {
      selectModelProvider({ env: this.#deps.context.env });
      return true;
    } catch (err) {
      // A half-configured endpoint is the server's model too: the task reports its configuration error.
      return !(err instanceof ModelError && err.provider === MODEL_SELECTION);
    }
  }

  /**
   * One round of a task run in round trips (task-rounds.ts): answered at the next turn the client's model
   * must take, at a question for the person, or at the end. Its model is the server's when it has one.
   */
  #round(effect: RunToolEffect, rounds: TaskRounds, serverModel: boolean): void {
    const { ticket } = effect;
    const entry = { requestKey: idKey(effect.requestId), controller: new AbortController(), result: null as EffectResult | null };
    this.#rounds.set(ticket, entry);
    const deliver = (result: EffectResult) => {
      entry.result = result;
      if (entry.controller.signal.aborted) this.#rounds.delete(ticket);
      this.#deps.deliver(result);
    };
    let model: ModelProvider | undefined;
    try {
      model = serverModel || !rounds.sample ? selectModelProvider({ env: this.#deps.context.env }) : undefined;
    } catch (err) {
      // A half-configured endpoint, or (a retry reaching a node without one) no model at all: said as a task's.
      if (err instanceof ModelError) return deliver({ kind: 'toolDone', ticket, outcome: { text: err.message, isError: true } });
      throw err;
    }
    const deps = {
      context: this.#deps.context, workspace: effect.workspace ?? this.#deps.workspace, toolTimeoutMs: this.#deps.toolTimeoutMs,
      executeTool: this.#deps.executeTool, logger: this.#deps.logger, clock: this.#deps.clock ?? systemClock,
      onProgress: (progress: ToolProgress) => this.#deps.deliver({ kind: 'toolProgress', ticket, progress }), signal: entry.controller.signal,
      canAsk: rounds.ask, ...(model === undefined ? {} : { model }),
    };
    runTaskRound(deps, effect.args, effect.harness, rounds.resume).then((out) => {
      if (out.kind === 'done') deliver({ kind: 'toolDone', ticket, outcome: out.outcome });
      else if (out.kind === 'stale') deliver({ kind: 'effectFailed', ticket, code: ErrorCode.InvalidParams, message: out.message });
      else if (out.kind === 'ask') deliver({ kind: 'toolAsk', ticket, conversationId: out.conversationId, turn: out.turn, seq: out.seq, message: out.message });
      else deliver({ kind: 'toolInput', ticket, conversationId: out.conversationId, turn: out.turn, seq: out.seq, params: out.params });
    }, (err: unknown) => {
      this.#deps.logger.log('error', 'a harness task round failed', { error: (err as Error).stack ?? String(err) });
      deliver({ kind: 'toolDone', ticket, outcome: { text: `Internal error: the task round failed: ${(err as Error).message}`, isError: true } });
    });
  }

  #provider(effect: RunToolEffect): ModelProvider {
    return selectModelProvider({
      env: this.#deps.context.env,
      clientCapabilities: effect.client.sampling ? { sampling: {} } : {},
      sample: (params, opts) => this.#ask(effect.ticket, 'sampling/createMessage', params, opts.signal) as Promise<CreateMessageResult>,
    });
  }

  #ask(ticket: number, method: Ask['method'], params: unknown, signal?: AbortSignal): Promise<unknown> {
    const key = this.#nextKey++;
    const id = `${ticket}:${key}`;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#asks.delete(id);
        reject(new Error('aborted'));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#asks.set(id, {
        ticket, key, method, params,
        resolve: (v) => { signal?.removeEventListener('abort', onAbort); resolve(v); },
        reject: (e) => { signal?.removeEventListener('abort', onAbort); reject(e); },
      });
      this.#deps.deliver({ kind: 'clientRequest', ticket, key, method, params });
    });
  }
}
