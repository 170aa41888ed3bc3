// Runs the effects one connection's core asks for — tools with a deadline and cancellation, workspace
// reads, path completions, logs — and hands each result back. One runner per actor incarnation, so
// a late result from before a restart can never be mistaken for a new ticket's.

import type { Effect, EffectResult, StoredTask } from '../mcp/effects.ts';
import { type Clock, systemClock } from '../time/clock.ts';
import { ErrorCode } from '../mcp/jsonrpc.ts';
import type { AsyncConversationStore } from '../store/async-store.ts';
import { StoreError } from '../store/errors.ts';
import type { TaskContext } from '../task/task-context.ts';
import { cancelStoredTask, type DetachedTasks } from '../task/detached-tasks.ts';
import { readStoredTask } from '../task/task-status.ts';
import { undoConversation } from '../task/undo.ts';
import { endUnshowableTurn } from '../task/unshowable-turn.ts';
import { ToolError, type ToolExecutor, type ToolOutcome, type ToolProgress } from '../tools/contract.ts';
import type { Logger } from '../log/logger.ts';
import { completePath } from './path-completion.ts';
import { checkRoots } from './root-check.ts';
import { runTool } from '../tools/tool-runner.ts';
import { readTranscriptPage } from './transcript-page.ts';
import { gatherWorkspaceContext } from './workspace-context.ts';
import { ABORT_GRACE_MS, MAX_COMPLETION_VALUES } from '../limits.ts';

export interface EffectDeps {
  /** Real path of the configured workspace root; an effect naming the session's chosen root runs there instead. */
  readonly workspace: string;
  readonly logger: Logger;
  /** Deadline of one tool call. */
  readonly toolTimeoutMs: number;
  /** Where tool bodies run; in this thread by default. */
  readonly executeTool?: ToolExecutor;
  /** Without it, harness_task answers that tasks are not configured. */
  readonly task?: TaskContext;
  /**
   * The node's detached harness tasks (2026-07-28 Tasks extension), which outlive the request and the
   * session that started them. None (an anonymous caller: its conversations are keyed by its session, so
   * no later request could poll one): such a call runs on its request as before.
   */
  readonly detached?: DetachedTasks;
  /** Times tool deadlines and grace periods, and what the tools wait on. Default `systemClock`. */
  readonly clock?: Clock;
}

export class EffectRunner {
  readonly #deps: EffectDeps;
  readonly #clock: Clock;
  readonly #deliver: (result: EffectResult) => void;
  /**
   * Work in flight by ticket: its abort controller, and a promise that settles when it has stopped. Null
   * while there is none: an idle session holds no table (an empty Map keeps one, ~200 B, per session).
   */
  #work: Map<number, { controller: AbortController; done: Promise<void> }> | null = null;
  /** Listen streams (by ticket) and the transcripts and tasks each watches, unwatched when the stream ends or the incarnation that opened it exits. */
  #listened: Map<number, { transcripts: string[]; tasks: string[] }> | null = null;
  /** Connection actors of the session that exited so far: a listen begun under an earlier one watches nothing more. */
  #incarnation = 0;
  #closed = false;
  /** The pending roots deadline's timer (cleared on close), or null. */
  #rootsDeadline: unknown = null;

  constructor(deps: EffectDeps, deliver: (result: EffectResult) => void) {
    this.#deps = deps;
    this.#clock = deps.clock ?? systemClock;
    this.#deliver = (result) => {
      if (!this.#closed) deliver(result);
    };
  }

  get inFlight(): number {
    return this.#work?.size ?? 0;
  }

  run(effect: Effect): void {
    switch (effect.kind) {
      case 'log':
        return this.#deps.logger.log(effect.level, effect.message, effect.data);
      case 'cancel':
        this.#work?.get(effect.ticket)?.controller.abort(new Error('cancelled by the client'));
        this.#endListen(effect.ticket);
        return;
      case 'runTool':
        return this.#runTool(effect);
      case 'readWorkspace':
        return this.#track(effect.ticket, async (signal) => {
          const context = await gatherWorkspaceContext(effect.workspace ?? this.#deps.workspace, this.#clock, signal);
          this.#deliver({ kind: 'workspaceContext', ticket: effect.ticket, context });
        });
      case 'checkRoots':
        // Not tracked by ticket: nothing cancels it, and a stale answer is known to the core by its round.
        void checkRoots(effect.uris).then(
          (roots) => this.#deliver({ kind: 'rootsChecked', round: effect.round, roots }),
          (err: unknown) => {
            this.#deps.logger.log('error', 'checking the client roots failed', { error: (err as Error).stack ?? String(err) });
            this.#deliver({ kind: 'rootsChecked', round: effect.round, roots: effect.uris.map((uri) => ({ uri, problem: `it could not be checked (${(err as Error).message})` })) });
          },
        );
        return;
      case 'rootsDeadline':
        // One timer at most: a newer round makes the older one's deadline moot (the core ignores it).
        if (this.#rootsDeadline !== null) this.#clock.clearTimeout(this.#rootsDeadline);
        this.#rootsDeadline = this.#clock.setTimeout(() => {
          this.#rootsDeadline = null;
          this.#deliver({ kind: 'rootsWaitOver', round: effect.round });
        }, effect.ms);
        return;
      case 'clientResponse':
        // Questions to the client are asked only by harness tasks, whose session answers them.
        return;
      case 'consumeConfirmation':
        return this.#track(effect.ticket, async () => {
          // The store every process and node of this server shares (a SQLite file made on first use, or
          // PostgreSQL): the one place that can say a confirmation was already used, wherever it was.
          const task = this.#deps.task;
          if (task === undefined) {
            this.#deliver({ kind: 'effectFailed', ticket: effect.ticket, code: ErrorCode.InternalError, message: 'Internal error: this server has no store to record that the confirmation was used, so it does not run the confirmed call' });
            return;
          }
          const firstUse = await task.store().consumeRequestState(effect.digest, effect.expiresAt);
          this.#deliver({ kind: 'confirmationConsumed', ticket: effect.ticket, firstUse });
        });
      case 'readTranscript':
        return this.#track(effect.ticket, async () => {
          const task = this.#deps.task;
          const store = this.#readStore();
          const page = task && store ? await readTranscriptPage(store, effect.conversationId, task.principal, effect.afterSeq) : null;
          this.#deliver({ kind: 'transcript', ticket: effect.ticket, jsonl: page?.jsonl ?? null, ...(page?.nextAfterSeq === undefined ? {} : { nextAfterSeq: page.nextAfterSeq }) });
        });
      case 'watchTranscript':
        return this.#track(effect.ticket, async (signal) => {
          const task = this.#deps.task;
          const store = this.#readStore();
          // One lookup by (id, principal): another principal's conversation is found exactly as a missing one is not.
          const found = task !== undefined && store !== null && (await store.getConversation(effect.conversationId, task.principal)) !== null;
          // Cancelled meanwhile: the core has dropped the subscribe (and asked to release a watch it had not made yet).
          if (signal.aborted) return;
          if (found) task.watchTranscript?.(effect.conversationId);
          this.#deliver({ kind: 'transcriptFound', ticket: effect.ticket, found });
        });
      case 'unwatchTranscript':
        // The session's subscription ended; a listen stream's own watch of the transcript is counted apart (#endListen).
        this.#deps.task?.unwatchTranscript?.(effect.conversationId, false);
        return;
      case 'watchTranscripts':
        return this.#track(effect.ticket, async (signal) => {
          const task = this.#deps.task;
          const store = this.#readStore();
          const incarnation = this.#incarnation;
          const found: string[] = [];
          // One lookup by (id, principal) each, as for watchTranscript: another principal's is not told from a missing one.
          for (const id of effect.conversationIds) {
            if (task === undefined || store === null || (await store.getConversation(id, task.principal)) === null) continue;
            // The actor that asked exited meanwhile (its stream is gone, or run again under a new ticket), or the
            // client ended the stream (its cancel unwatched what it had): nothing more is watched for it.
            if (incarnation !== this.#incarnation || signal.aborted) break;
            // Watched for this stream only: its end (or its incarnation's) unwatches it.
            task.watchTranscript?.(id, true);
            this.#listenedBy(effect.ticket).transcripts.push(id);
            found.push(id);
          }
          // Watched before the state is read, so a change after that read is reported; and told again
          // after the acknowledgment, so one reported before it (which the stream could not carry yet) is not lost.
          const tasks: StoredTask[] = [];
          for (const id of effect.taskIds) {
            if (task === undefined || store === null || (await store.getConversation(id, task.principal)) === null) continue;
            if (incarnation !== this.#incarnation || signal.aborted) break;
            task.watchTask?.(id);
            this.#listenedBy(effect.ticket).tasks.push(id);
            const now = await readStoredTask(store, task.principal, id);
            if (now !== null) tasks.push(now);
          }
          this.#deliver({ kind: 'transcriptsWatched', ticket: effect.ticket, found, ...(effect.taskIds.length > 0 ? { tasks } : {}) });
          for (const t of tasks) task?.taskStatusChanged?.(t.taskId);
        }, (err) => {
          // The listen is answered with the error and ends: what it watched so far is unwatched.
          this.#endListen(effect.ticket);
          return { kind: 'effectFailed', ticket: effect.ticket, code: ErrorCode.InternalError, message: `Internal error: ${(err as Error).message}` };
        });
      case 'listConversations':
        return this.#track(effect.ticket, async () => {
          const task = this.#deps.task;
          const store = this.#readStore();
          const options = { limit: effect.limit, ...(effect.cursor === undefined ? {} : { cursor: effect.cursor }) };
          let page: Extract<EffectResult, { kind: 'conversationList' }>['page'];
          try {
            // By principal, as every read: another principal's conversations are not in the page at all.
            const found = task && store ? await store.listConversations(task.principal, options) : { items: [] };
            page = { ids: found.items.map((c) => c.id), ...(found.nextCursor === undefined ? {} : { nextCursor: found.nextCursor }) };
          } catch (err) {
            if (!(err instanceof StoreError) || err.code !== 'invalid_cursor') throw err;
            page = 'invalid-cursor';
          }
          this.#deliver({ kind: 'conversationList', ticket: effect.ticket, page });
        });
      case 'readTask':
        return this.#track(effect.ticket, async () => {
          const task = this.#deps.task;
          const store = this.#readStore();
          const detached = this.#deps.detached;
          const read = () => (task && store ? readStoredTask(store, task.principal, effect.taskId, { local: task.local, forbidWrites: task.forbidWrites, canConfirm: effect.canAsk }) : null);
          let found = await read();
          // A parked task whose wait is over (its parking node's timer may have died with it) is resumed unanswered, then read again.
          if (found?.status === 'input_required' && task && detached && await detached.expireIfDue(effect.taskId, task, this.#deps)) found = await read();
          // A client-model turn no poll can show is ended at once, not left to the wait (unshowable-turn.ts).
          if (found?.status === 'input_required' && found.question != null && 'unshown' in found.question && task && store) {
            const reader = { local: task.local, forbidWrites: task.forbidWrites, canConfirm: effect.canAsk };
            if (await endUnshowableTurn(store, effect.taskId, task.principal, reader, task.taskStatusChanged)) found = await read();
          }
          this.#deliver({ kind: 'taskRead', ticket: effect.ticket, task: found });
        });
      case 'updateTask':
        return this.#track(effect.ticket, async () => {
          const task = this.#deps.task;
          const store = this.#readStore();
          const detached = this.#deps.detached;
          const found = task && store && detached ? await detached.answer(effect.taskId, effect.answers, effect.canAsk, task, this.#deps) : false;
          this.#deliver({ kind: 'taskUpdated', ticket: effect.ticket, found });
        });
      case 'cancelTask':
        return this.#track(effect.ticket, async () => {
          const task = this.#deps.task;
          const store = this.#readStore();
          const outcome = task && store ? await cancelStoredTask(store, task.principal, effect.taskId, this.#deps.detached, this.#clock) : 'not-found';
          // Cancelled in the store, not by a run of this node: this node's transcript listeners hear of the entry here.
          if (outcome === 'fenced') task?.transcriptChanged?.(effect.taskId);
          this.#deliver({ kind: 'taskCancelled', ticket: effect.ticket, found: outcome !== 'not-found' });
        });
      case 'completeConversation':
        return this.#track(effect.ticket, async () => {
          const task = this.#deps.task;
          const store = this.#readStore();
          const { ids, total } = task && store ? await store.recentConversationIds(task.principal, effect.prefix, MAX_COMPLETION_VALUES) : { ids: [], total: 0 };
          this.#deliver({ kind: 'conversationCompletions', ticket: effect.ticket, values: ids, total });
        });
      case 'completePath':
        return this.#track(effect.ticket, async (signal) => {
          const { values, hasMore } = await completePath(effect.workspace ?? this.#deps.workspace, effect.prefix, signal);
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
    if (this.#rootsDeadline !== null) this.#clock.clearTimeout(this.#rootsDeadline);
    this.#rootsDeadline = null;
    const done = [...(this.#work?.values() ?? [])].map((w) => {
      w.controller.abort(new Error(reason));
      return w.done;
    });
    if (done.length === 0) return;
    let timer: unknown;
    await Promise.race([Promise.all(done), new Promise<void>((r) => { timer = this.#clock.setTimeout(r, graceMs); })]);
    this.#clock.clearTimeout(timer);
  }

  /**
   * The session's connection actor exited (a crash, a killed thread): the transcripts and tasks its listen
   * streams named are unwatched. The next incarnation knows none of those tickets, so no cancel would ever reach them; a
   * listen still in flight is run again there (crash-recovery.ts) and watches anew under its own ticket,
   * and one answered with an error instead (poison) has ended.
   */
  incarnationEnded(): void {
    this.#incarnation++;
    for (const ticket of [...(this.#listened?.keys() ?? [])]) this.#endListen(ticket);
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
      const clock = this.#clock;
      const deadline = clock.setTimeout(() => {
        this.#work?.get(ticket)?.controller.abort(new Error(`the tool call passed its deadline of ${this.#deps.toolTimeoutMs / 1000} s`));
      }, this.#deps.toolTimeoutMs);
      // A body that ignores its abort signal is answered for after a grace period; its late result is dropped.
      let graceTimer: unknown;
      const onAbort = () => {
        graceTimer = clock.setTimeout(() => answer({ kind: 'toolDone', ticket, outcome: { text: `Stopped: ${reasonOf(signal)}`, isError: true } }), ABORT_GRACE_MS);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        const onProgress = (progress: ToolProgress) => { if (!answered) this.#deliver({ kind: 'toolProgress', ticket, progress }); };
        const outcome = effect.tool === 'harness_task'
          ? await this.#runTask(effect)
          : await execute(effect.tool, effect.args, effect.harness, { workspace: effect.workspace ?? this.#deps.workspace, signal, onProgress, clock });
        answer({ kind: 'toolDone', ticket, outcome });
      } catch (err) {
        // A body stopped by its signal may reject with the abort reason: that is a stop, not a bug.
        if (!signal.aborted) throw err;
        answer({ kind: 'toolDone', ticket, outcome: { text: `Stopped: ${reasonOf(signal)}`, isError: true } });
      } finally {
        clock.clearTimeout(deadline);
        clock.clearTimeout(graceTimer);
        signal.removeEventListener('abort', onAbort);
      }
    }, (err) => ({ kind: 'toolDone', ticket, outcome: { text: `Internal error in tool ${effect.tool}: ${(err as Error).message}`, isError: true } }));
  }

  /** harness_task here is undo only: tasks themselves run as task actors (session-tasks.ts). */
  async #runTask(effect: Extract<Effect, { kind: 'runTool' }>): Promise<ToolOutcome> {
    const args = effect.args;
    const task = this.#deps.task;
    if (!task) return { text: 'harness_task is not configured in this server (no conversation store).', isError: true };
    if (args.undo !== true) return { text: 'harness_task runs as a task actor; this runner only undoes (pass undo: true).', isError: true };
    if (typeof args.conversation_id !== 'string') return { text: 'undo needs conversation_id: the conversation whose changes to revert.', isError: true };
    try {
      return await undoConversation(task.store(), args.conversation_id, task.principal, effect.workspace ?? this.#deps.workspace);
    } catch (err) {
      if (err instanceof ToolError) return { text: err.message, isError: true };
      throw err;
    }
  }

  /** The store for a read: none when tasks are not configured or no database was ever made. */
  #readStore(): AsyncConversationStore | null {
    const task = this.#deps.task;
    if (!task) return null;
    return task.existingStore ? task.existingStore() : task.store();
  }

  /** What the listen stream of `ticket` watches (made on its first watch). */
  #listenedBy(ticket: number): { transcripts: string[]; tasks: string[] } {
    const listened = (this.#listened ??= new Map());
    let watched = listened.get(ticket);
    if (watched === undefined) listened.set(ticket, (watched = { transcripts: [], tasks: [] }));
    return watched;
  }

  /** A listen stream ended (its request cancelled): the transcripts and tasks it named are no longer watched for it. */
  #endListen(ticket: number): void {
    const watched = this.#listened?.get(ticket);
    if (watched === undefined) return;
    this.#listened?.delete(ticket);
    if (this.#listened?.size === 0) this.#listened = null;
    for (const id of watched.transcripts) this.#deps.task?.unwatchTranscript?.(id, true);
    for (const id of watched.tasks) this.#deps.task?.unwatchTask?.(id);
  }

  /** Runs async work for a ticket with an abort controller; an unexpected throw answers the request with an error. */
  #track(ticket: number, body: (signal: AbortSignal) => Promise<void>, onError?: (err: unknown) => EffectResult): void {
    const controller = new AbortController();
    const done = body(controller.signal).catch((err: unknown) => {
      // Stopped by its own abort (a cancel, which the core has already forgotten, or close): not a failure.
      if (controller.signal.aborted && err === controller.signal.reason) return;
      this.#deps.logger.log('error', 'effect failed', { ticket, error: (err as Error).stack ?? String(err) });
      this.#deliver(onError ? onError(err) : { kind: 'effectFailed', ticket, code: ErrorCode.InternalError, message: `Internal error: ${(err as Error).message}` });
    }).finally(() => {
      const work = this.#work;
      if (work?.delete(ticket) && work.size === 0) this.#work = null;
    });
    (this.#work ??= new Map()).set(ticket, { controller, done });
  }
}

function reasonOf(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason.message : String(reason ?? 'aborted');
}
