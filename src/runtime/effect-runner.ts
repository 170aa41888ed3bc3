// Runs the effects one connection's core asks for — tools with a deadline and cancellation, workspace
// reads, path completions, logs — and hands each result back. One runner per actor incarnation, so
// a late result from before a restart can never be mistaken for a new ticket's.

import type { CreateMessageResult } from '@modelcontextprotocol/sdk/types.js';
import type { Effect, EffectResult } from '../mcp/effects.ts';
import { ErrorCode } from '../mcp/jsonrpc.ts';
import { transcriptUri } from '../mcp/resources.ts';
import type { HarnessId } from '../harness/ids.ts';
import { ModelError } from '../model/types.ts';
import { selectModelProvider } from '../model/select.ts';
import type { ConversationStore } from '../store/store.ts';
import { runAgentTask } from '../task/agent-loop.ts';
import { undoConversation } from '../task/undo.ts';
import { type ToolContext, ToolError, type ToolOutcome, type ToolProgress } from '../tools/contract.ts';
import type { ToolName } from '../tools/definition.ts';
import type { Logger } from './logger.ts';
import { completePath } from './path-completion.ts';
import { runTool } from './tool-runner.ts';
import { gatherWorkspaceContext } from './workspace-context.ts';

/** After a deadline or cancellation aborts a tool, how long it has to stop before it is answered for. */
export const ABORT_GRACE_MS = 2000;

export type ToolExecutor = (tool: ToolName, args: Record<string, unknown>, harness: HarnessId, ctx: ToolContext) => Promise<ToolOutcome>;

/** What harness tasks need: the store (opened on first use), who the caller is, which session. */
export interface TaskContext {
  readonly store: () => ConversationStore;
  /** The store's owner key for this caller. */
  readonly principal: string;
  readonly local: boolean;
  readonly forbidWrites: boolean;
  readonly sessionId: string;
  readonly env: NodeJS.ProcessEnv;
}

export interface EffectDeps {
  /** Real path of the workspace root. */
  readonly workspace: string;
  readonly logger: Logger;
  /** Deadline of one tool call. */
  readonly toolTimeoutMs: number;
  /** Where tool bodies run; in this thread by default. */
  readonly executeTool?: ToolExecutor;
  /** Without it, harness_task answers that tasks are not configured. */
  readonly task?: TaskContext;
}

export class EffectRunner {
  readonly #deps: EffectDeps;
  readonly #deliver: (result: EffectResult) => void;
  /** Work in flight by ticket: its abort controller, and a promise that settles when it has stopped. */
  readonly #work = new Map<number, { controller: AbortController; done: Promise<void> }>();
  #closed = false;
  /** Requests to the client awaiting their answer, by `ticket:key`. */
  readonly #asks = new Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  #nextAsk = 1;

  constructor(deps: EffectDeps, deliver: (result: EffectResult) => void) {
    this.#deps = deps;
    this.#deliver = (result) => {
      if (!this.#closed) deliver(result);
    };
  }

  get inFlight(): number {
    return this.#work.size;
  }

  run(effect: Effect): void {
    switch (effect.kind) {
      case 'log':
        return this.#deps.logger.log(effect.level, effect.message, effect.data);
      case 'cancel':
        this.#work.get(effect.ticket)?.controller.abort(new Error('cancelled by the client'));
        return;
      case 'runTool':
        return this.#runTool(effect);
      case 'readWorkspace':
        return this.#track(effect.ticket, async () => {
          const context = await gatherWorkspaceContext(this.#deps.workspace);
          this.#deliver({ kind: 'workspaceContext', ticket: effect.ticket, context });
        });
      case 'clientResponse': {
        const waiting = this.#asks.get(`${effect.ticket}:${effect.key}`);
        if (!waiting) return;
        this.#asks.delete(`${effect.ticket}:${effect.key}`);
        if (effect.error) waiting.reject(new Error(`the client answered ${effect.error.code}: ${effect.error.message}`));
        else waiting.resolve(effect.result);
        return;
      }
      case 'readTranscript':
        return this.#track(effect.ticket, async () => {
          const task = this.#deps.task;
          const entries = task ? task.store().entries(effect.conversationId, task.principal) : null;
          const jsonl = entries === null ? null : entries.map((e) => JSON.stringify({ seq: e.seq, time: e.time, type: e.type, payload: e.payload })).join('\n');
          this.#deliver({ kind: 'transcript', ticket: effect.ticket, jsonl });
        });
      case 'completePath':
        return this.#track(effect.ticket, async () => {
          const { values, hasMore } = await completePath(this.#deps.workspace, effect.prefix);
          this.#deliver({ kind: 'pathCompletions', ticket: effect.ticket, values, hasMore });
        });
    }
  }

  /**
   * Aborts all work in flight, stops delivering results, and waits (up to `graceMs`) for the work to
   * stop, so child processes are reaped before the caller goes on.
   */
  async close(reason: string, graceMs: number = ABORT_GRACE_MS): Promise<void> {
    this.#closed = true;
    const done = [...this.#work.values()].map((w) => {
      w.controller.abort(new Error(reason));
      return w.done;
    });
    if (done.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(done), new Promise<void>((r) => { timer = setTimeout(r, graceMs); })]);
    clearTimeout(timer);
  }

  #runTool(effect: Extract<Effect, { kind: 'runTool' }>): void {
    const { ticket } = effect;
    const execute = this.#deps.executeTool ?? runTool;
    this.#track(ticket, async (signal) => {
      let answered = false;
      const answer = (result: EffectResult) => {
        if (answered) return;
        answered = true;
        this.#deliver(result);
      };
      const deadline = setTimeout(() => {
        this.#work.get(ticket)?.controller.abort(new Error(`the tool call passed its deadline of ${this.#deps.toolTimeoutMs / 1000} s`));
      }, this.#deps.toolTimeoutMs);
      // A body that ignores its abort signal is answered for after a grace period; its late result is dropped.
      let graceTimer: NodeJS.Timeout | undefined;
      const onAbort = () => {
        graceTimer = setTimeout(() => answer({ kind: 'toolDone', ticket, outcome: { text: `Stopped: ${reasonOf(signal)}`, isError: true } }), ABORT_GRACE_MS);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        const onProgress = (progress: ToolProgress) => { if (!answered) this.#deliver({ kind: 'toolProgress', ticket, progress }); };
        const outcome = effect.tool === 'harness_task'
          ? await this.#runTask(effect, signal, onProgress, execute)
          : await execute(effect.tool, effect.args, effect.harness, { workspace: this.#deps.workspace, signal, onProgress });
        answer({ kind: 'toolDone', ticket, outcome });
      } catch (err) {
        // A body stopped by its signal may reject with the abort reason: that is a stop, not a bug.
        if (!signal.aborted) throw err;
        answer({ kind: 'toolDone', ticket, outcome: { text: `Stopped: ${reasonOf(signal)}`, isError: true } });
      } finally {
        clearTimeout(deadline);
        clearTimeout(graceTimer);
        signal.removeEventListener('abort', onAbort);
      }
    }, (err) => ({ kind: 'toolDone', ticket, outcome: { text: `Internal error in tool ${effect.tool}: ${(err as Error).message}`, isError: true } }));
  }

  /** Asks the client (through the core, which knows what it declared) on behalf of the work of `ticket`. */
  #askClient(ticket: number, method: 'sampling/createMessage' | 'elicitation/create', params: unknown, signal?: AbortSignal): Promise<unknown> {
    const key = this.#nextAsk++;
    return new Promise((resolve, reject) => {
      const id = `${ticket}:${key}`;
      const onAbort = () => {
        this.#asks.delete(id);
        reject(new Error('aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#asks.set(id, {
        resolve: (v) => { signal?.removeEventListener('abort', onAbort); resolve(v); },
        reject: (e) => { signal?.removeEventListener('abort', onAbort); reject(e); },
      });
      this.#deliver({ kind: 'clientRequest', ticket, key, method, params });
    });
  }

  /** The person's yes or no, through elicitation (the same question the core asks for direct calls). */
  async #confirm(ticket: number, message: string, signal: AbortSignal): Promise<boolean> {
    const answer = await this.#askClient(ticket, 'elicitation/create', {
      message,
      requestedSchema: { type: 'object', properties: { allow: { type: 'boolean', title: 'Allow', description: 'Allow this call', default: false } }, required: ['allow'] },
    }, signal) as { action?: unknown; content?: { allow?: unknown } } | undefined;
    return answer?.action === 'accept' && answer.content?.allow === true;
  }

  async #runTask(effect: Extract<Effect, { kind: 'runTool' }>, signal: AbortSignal, onProgress: (p: ToolProgress) => void, execute: ToolExecutor): Promise<ToolOutcome> {
    try {
      return await this.#task(effect, signal, onProgress, execute);
    } catch (err) {
      if (err instanceof ToolError) return { text: err.message, isError: true };
      throw err;
    }
  }

  async #task(effect: Extract<Effect, { kind: 'runTool' }>, signal: AbortSignal, onProgress: (p: ToolProgress) => void, execute: ToolExecutor): Promise<ToolOutcome> {
    const args = effect.args;
    const task = this.#deps.task;
    if (!task) return { text: 'harness_task is not configured in this server (no conversation store).', isError: true };
    if (args.undo === true) {
      if (typeof args.conversation_id !== 'string') return { text: 'undo needs conversation_id: the conversation whose changes to revert.', isError: true };
      return undoConversation(task.store(), args.conversation_id, task.principal, this.#deps.workspace);
    }
    let provider;
    try {
      provider = selectModelProvider({
        env: task.env,
        clientCapabilities: effect.client.sampling ? { sampling: {} } : {},
        sample: (params, opts) => this.#askClient(effect.ticket, 'sampling/createMessage', params, opts.signal) as Promise<CreateMessageResult>,
      });
    } catch (err) {
      if (err instanceof ModelError) return { text: err.message, isError: true };
      throw err;
    }
    return runAgentTask({
      harness: args.harness as HarnessId,
      prompt: String(args.prompt),
      ...(typeof args.conversation_id === 'string' ? { conversationId: args.conversation_id } : {}),
      ...(typeof args.max_turns === 'number' ? { maxTurns: args.max_turns } : {}),
      principal: task.principal,
      local: task.local,
      forbidWrites: task.forbidWrites,
      sessionId: task.sessionId,
    }, {
      store: task.store(),
      provider,
      workspace: this.#deps.workspace,
      executeTool: (tool, toolArgs, harness, ctx) => execute(tool, toolArgs, harness, ctx),
      onAppend: (conversationId) => this.#deliver({ kind: 'resourceUpdated', uri: transcriptUri(conversationId) }),
      ...(effect.client.elicitation ? { confirm: (message: string) => this.#confirm(effect.ticket, message, signal) } : {}),
      signal,
      onProgress,
    });
  }

  /** Runs async work for a ticket with an abort controller; an unexpected throw answers the request with an error. */
  #track(ticket: number, body: (signal: AbortSignal) => Promise<void>, onError?: (err: unknown) => EffectResult): void {
    const controller = new AbortController();
    const done = body(controller.signal).catch((err: unknown) => {
      this.#deps.logger.log('error', 'effect failed', { ticket, error: (err as Error).stack ?? String(err) });
      this.#deliver(onError ? onError(err) : { kind: 'effectFailed', ticket, code: ErrorCode.InternalError, message: `Internal error: ${(err as Error).message}` });
    }).finally(() => this.#work.delete(ticket));
    this.#work.set(ticket, { controller, done });
  }
}

function reasonOf(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason.message : String(reason ?? 'aborted');
}
