// Tasks that outlive their node. Every running task's lease is renewed by the node that runs it
// (task-run.ts); when a node dies, or is paused or cut off past its lease, its leases lapse. This module,
// one per server process on either store (PostgreSQL nodes, or processes on one SQLite file, where the
// store releases at open the lease of a task whose process is known dead and this one can continue:
// `judgeOrphan`), looks for lapsed leases at start and at a fixed interval, takes such a task over
// (the store lets exactly one node win, with the next fencing epoch) and continues it from its transcript,
// in the directory it ran in (takeover-placement.ts), with the same resume rules as after a worker crash
// (task-core.ts): idempotent calls run again, others are recorded interrupted, nothing durable is
// repeated. A task this process cannot continue is left to one that can, for ORPHAN_TASK_PATIENCE_MS past
// its lease; then (or at once, when no process can) it is marked interrupted, saying why. The caller that started the task was connected
// to the dead node, so nobody here waits for its answer: it is durable in the transcript and the
// conversation's status, readable by its principal from any node — and when the claimer kept which
// Streamable HTTP session and request it answers (on a PostgreSQL store), the answer is appended to that
// session's event log on that request's stream, where the client resuming the stream (GET with
// Last-Event-ID, any node) gets it.

import type { Scheduler } from '../actors/scheduler.ts';
import type { Logger } from '../log/logger.ts';
import { selectModelProvider } from '../model/select.ts';
import type { AsyncConversationStore } from '../store/async-store.ts';
import { type ExpiredTask, type TaskLease } from '../store/task-lease.ts';
import { MAX_EXPIRED_TASKS, ORPHAN_TASK_PATIENCE_MS, TASK_LEASE_MS } from '../limits.ts';
import type { ToolExecutor, ToolOutcome } from '../tools/contract.ts';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { resultLine } from '../mcp/jsonrpc.ts';
import type { TaskSetup } from './task-core.ts';
import type { TaskAllowance } from './principal-budget.ts';
import { TaskRun } from './task-run.ts';
import { confirmRoot, hasServerModel, type Placement, placementOf, scopeOf, setupOf, type TakeoverSite } from './takeover-placement.ts';

export { setupOf, workspaceOf } from './takeover-placement.ts';

/** Takeover passes per lease term: a lapsed task waits at most half a term more before a node looks. */
export const TAKEOVER_PASSES_PER_TERM = 2;

/**
 * When the first pass runs after start. Not at once: on SQLite the first pass opens an existing store
 * (the driver, the schema check), which delayed a stdio server's first reply by 13-28 ms (p50, spawn to
 * the initialize reply, with a database in $SUPERPI_HOME against without; measured by hand, not a bench/ row); a second later the host's
 * first exchanges are over, and a task whose process died still need not wait a lease.
 */
export const FIRST_TAKEOVER_PASS_DELAY_MS = 1000;

/** The JSON-RPC request a task answers, and where its answer goes: a session's event log (issue 14). */
export interface AnswerTarget {
  /** The Streamable HTTP session (its Mcp-Session-Id). */
  readonly session: string;
  /** The session's principal as its event log keeps it (`eventPrincipal`). */
  readonly principal: string;
  /** The `tools/call` request's id, as the client sent it. */
  readonly request: RequestId;
}

/** What a claimer keeps in the store for a node that continues its task: the setup, minus what the row says. */
export interface StoredSetup {
  readonly maxTurns: number;
  readonly local: boolean;
  readonly forbidWrites: boolean;
  /** Which request the task answers, when its answer can reach the client from another node (absent in setups kept before). */
  readonly answers?: AnswerTarget;
  /** The directory its tools run in (absent in setups kept before): a process on a shared SQLite file may serve another project. */
  readonly workspace?: string;
}

export function storedSetup(setup: TaskSetup, where: { readonly answers?: AnswerTarget | undefined; readonly workspace?: string } = {}): StoredSetup {
  const { answers, workspace } = where;
  return { maxTurns: setup.maxTurns, local: setup.local, forbidWrites: setup.forbidWrites, ...(answers ? { answers } : {}), ...(workspace === undefined ? {} : { workspace }) };
}

/** The request a taken-over task answers, when its claimer kept one (a setup without it, or not one super-pi writes: null). */
export function answerOf(task: Pick<ExpiredTask, 'setup'>): AnswerTarget | null {
  const answers = (task.setup as { answers?: unknown } | null)?.answers;
  if (typeof answers !== 'object' || answers === null) return null;
  const { session, principal, request } = answers as Record<string, unknown>;
  if (typeof session !== 'string' || session === '' || typeof principal !== 'string' || principal === '') return null;
  if (typeof request !== 'string' && !(typeof request === 'number' && Number.isSafeInteger(request))) return null;
  return { session, principal, request };
}

/** The JSON-RPC response a task's outcome makes, as the connection actor would have sent it (`toolResult`). */
export function answerLine(request: RequestId, outcome: ToolOutcome): string {
  return resultLine(request, {
    content: [{ type: 'text', text: outcome.text }],
    ...(outcome.structured ? { structuredContent: outcome.structured } : {}),
    ...(outcome.isError ? { isError: true } : {}),
  });
}

export interface TaskTakeoverDeps {
  /**
   * The store, or null while there is none (SQLite opened on first use: a pass never creates one, and
   * with none there is nothing to take over).
   */
  readonly store: () => AsyncConversationStore | null;
  /** The store's lease term (default `TASK_LEASE_MS`); passes run `TAKEOVER_PASSES_PER_TERM` times per term. */
  readonly leaseMs?: number;
  /** When the first pass runs after `start` (default FIRST_TAKEOVER_PASS_DELAY_MS). */
  readonly firstPassDelayMs?: number;
  readonly scheduler: Scheduler;
  /** This process's workspace (a real path): a task continues here only when it ran in it (or below it, with `servesBelow`). */
  readonly workspace: string;
  /**
   * Tasks that ran in a directory below `workspace` are continued too, in that directory (a PostgreSQL
   * node following its clients' roots, `TakeoverSite.below`). Default false: only tasks that ran in
   * `workspace` itself; others are left to a process serving theirs.
   */
  readonly servesBelow?: boolean;
  /** How long past its lease a task this process cannot continue is left for one that can (default ORPHAN_TASK_PATIENCE_MS). */
  readonly patienceMs?: number;
  readonly toolTimeoutMs: number;
  /** The tool executor for a principal's owner key (its share of the tool pool). */
  readonly executorFor: (principal: string) => ToolExecutor;
  /** Where the model is configured (SUPERPI_MODEL_URL…): a taken-over task cannot sample its client. */
  readonly env: NodeJS.ProcessEnv;
  readonly logger: Logger;
  /** The share of a principal's budget (by owner key) a taken-over task spends: counted, never refused, as it already runs. */
  readonly adoptAllowance?: (principal: string) => TaskAllowance;
  /** Starts the run under the node's task supervisor, as a session's task is. */
  readonly supervise: (run: TaskRun, principal: string) => Promise<void>;
  /** The conversation got an entry: sessions on this node watching it hear. */
  readonly transcriptChanged: (conversationId: string) => void;
  /** Sends a taken-over task's answer (`answerLine`) to the request it answers; absent: nobody can be told. */
  readonly answer?: (target: AnswerTarget, line: string) => Promise<void>;
}

export class TaskTakeover {
  readonly #deps: TaskTakeoverDeps;
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;
  #pass: Promise<void> | null = null;
  /** The error the last pass failed with, until one succeeds. */
  #failing: string | null = null;
  readonly #runs = new Set<TaskRun>();

  constructor(deps: TaskTakeoverDeps) {
    this.#deps = deps;
  }

  /** Tasks this node took over and is still running. */
  get running(): readonly TaskRun[] {
    return [...this.#runs];
  }

  /**
   * Passes from now on: the first after `firstPassDelayMs` (a task whose process died before this one
   * started need not wait a lease), then every `leaseMs / TAKEOVER_PASSES_PER_TERM`.
   */
  start(): void {
    if (this.#timer !== null || this.#stopped) return;
    const every = Math.floor((this.#deps.leaseMs ?? TASK_LEASE_MS) / TAKEOVER_PASSES_PER_TERM);
    this.#timer = setInterval(() => void this.pass(), every);
    this.#timer.unref();
    setTimeout(() => void this.pass(), this.#deps.firstPassDelayMs ?? FIRST_TAKEOVER_PASS_DELAY_MS).unref();
  }

  /** Stops looking; tasks already taken over go on (the application stops them with the tree). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    await this.#pass;
  }

  /** One look for lapsed leases; a pass still under way is not started twice. Never rejects. */
  pass(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    this.#pass ??= this.#takeOverLapsed()
      .then(() => { this.#failing = null; }, (err: unknown) => {
        // Said once while it keeps failing the same way (a SQLite file this version cannot open fails every pass).
        const error = (err as Error).message;
        if (error !== this.#failing) this.#deps.logger.log('warning', 'looking for tasks to take over failed; trying again at every pass', { error });
        this.#failing = error;
      })
      .finally(() => (this.#pass = null));
    return this.#pass;
  }

  async #takeOverLapsed(): Promise<void> {
    const store = this.#deps.store();
    if (store === null) return;
    const site: TakeoverSite = { workspace: this.#deps.workspace, below: this.#deps.servesBelow ?? false, model: hasServerModel(this.#deps.env) };
    const patienceMs = this.#deps.patienceMs ?? ORPHAN_TASK_PATIENCE_MS;
    // Asked for only what this pass can act on: tasks left to other processes never use its budget.
    for (const task of await store.expiredTasks(MAX_EXPIRED_TASKS, scopeOf(site, patienceMs))) {
      if (this.#stopped) return;
      const placed = await this.#place(task, site);
      // Left for a process that can continue it, until the patience runs out.
      if (placed.kind === 'elsewhere' && task.lapsedMs < patienceMs) continue;
      const lease = await store.takeOverTask(task.conversationId, task.epoch);
      // Another node won it, or its holder renewed after all.
      if (lease === null) continue;
      if (placed.kind !== 'here') {
        const why = placed.kind === 'nowhere' ? placed.reason : `${placed.reason}, and no process that could continue it took it over within ${Math.round(patienceMs / 1000)} s of its lease lapsing`;
        await this.#interrupt(store, task, lease, why);
        continue;
      }
      this.#deps.logger.log('info', 'took over a task whose lease lapsed; continuing it from its transcript', { conversation: task.conversationId, epoch: lease.epoch, workspace: placed.root });
      await this.#continue(store, task, lease, placed.root);
    }
  }

  /** Where the task goes on: its recorded directory, once checked on disk as a client's root is. */
  async #place(task: ExpiredTask, site: TakeoverSite): Promise<Placement> {
    const placed = placementOf(task, site);
    if (placed.kind !== 'here') return placed;
    const checked = await confirmRoot(placed.root, site);
    if ('problem' in checked) return { kind: 'elsewhere', reason: `the directory it ran in, ${placed.root}, cannot be used here: ${checked.problem}` };
    return { kind: 'here', root: checked.path };
  }

  /** Marks a task taken over interrupted, as the user can see and continue it, under the lease just taken (no one else writes now). */
  async #interrupt(store: AsyncConversationStore, task: ExpiredTask, lease: TaskLease, reason: string): Promise<void> {
    const message = `The server process running this task stopped; another took it over but cannot continue it: ${reason}. Continue it with conversation_id ${task.conversationId}.`;
    this.#deps.logger.log('error', 'a taken-over task cannot be continued; it is marked interrupted', { conversation: task.conversationId, reason });
    await store.append(task.conversationId, 'interrupted', { message }, lease.epoch);
    await store.setStatus(task.conversationId, 'interrupted', lease.epoch);
  }

  async #continue(store: AsyncConversationStore, task: ExpiredTask, lease: TaskLease, workspace: string): Promise<void> {
    const { logger } = this.#deps;
    const setup = setupOf(task);
    let run: TaskRun;
    try {
      if (typeof setup === 'string') throw new Error(setup);
      run = new TaskRun({
        setup, principal: task.principal, store, lease,
        ...(this.#deps.leaseMs === undefined ? {} : { leaseMs: this.#deps.leaseMs }),
        scheduler: this.#deps.scheduler,
        provider: selectModelProvider({ env: this.#deps.env }),
        workspace,
        executeTool: this.#deps.executorFor(task.principal),
        toolTimeoutMs: this.#deps.toolTimeoutMs,
        logger,
        onProgress: () => undefined,
        onAppend: () => this.#deps.transcriptChanged(task.conversationId),
        confirm: () => Promise.reject(new Error('the client that started the task is connected to another node')),
        ...(this.#deps.adoptAllowance ? { allowance: this.#deps.adoptAllowance(task.principal) } : {}),
      });
    } catch (err) {
      await this.#interrupt(store, task, lease, (err as Error).message);
      return;
    }
    this.#runs.add(run);
    const target = answerOf(task);
    void run.outcome.then(async (outcome) => {
      this.#runs.delete(run);
      const status = (outcome.structured as { status?: unknown } | undefined)?.status;
      logger.log('info', 'a taken-over task ended; its answer is in its transcript', { conversation: task.conversationId, status: String(status), isError: outcome.isError === true });
      if (target === null || this.#deps.answer === undefined) return;
      try {
        await this.#deps.answer(target, answerLine(target.request, outcome));
      } catch (err) {
        logger.log('warning', 'a taken-over task\'s answer could not be sent to its session; it is in the transcript', { conversation: task.conversationId, session: target.session, error: (err as Error).message });
      }
    });
    try {
      await this.#deps.supervise(run, task.principal);
    } catch (err) {
      run.gaveUp(`it could not be started (${(err as Error).message})`);
    }
  }
}
