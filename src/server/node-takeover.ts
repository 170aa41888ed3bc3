// How a server process takes part in taking tasks over (task/task-takeover.ts), on either store: on
// PostgreSQL it continues tasks of other nodes whose lease lapsed, in the directory each ran in when this
// node serves it (its workspace, or a root below it when it follows its clients' roots); on SQLite it
// continues tasks of other processes on the same file that ran in its workspace — without waiting a lease
// when the process is known dead (the store releases such a task's lease at open when this process can
// continue it, `judgeOrphans`), else once the lease lapses. A task it cannot continue is left to one that
// can, for `orphanPatienceMs` past its lease. Its taken-over tasks run under this process's task
// supervisor, tool pool and budgets, as a session's do.

import type { Scheduler } from '../actors/scheduler.ts';
import { idKey } from '../mcp/jsonrpc.ts';
import type { Principal } from '../mcp/state.ts';
import type { AsyncConversationStore } from '../store/async-store.ts';
import type { SessionEventFeed } from '../store/session-event-feed.ts';
import { requestStream } from '../store/session-events.ts';
import type { ExpiredTask } from '../store/task-lease.ts';
import type { PrincipalBudgets } from '../task/principal-budget.ts';
import type { OrphanVerdict } from '../store/orphan-verdict.ts';
import { hasServerModel, judgeOrphan, type TakeoverSite } from '../task/takeover-placement.ts';
import { TaskTakeover } from '../task/task-takeover.ts';
import type { ToolExecutor } from '../tools/contract.ts';
import type { ApplicationOptions } from './application-options.ts';
import type { ConversationWatches } from './conversation-watches.ts';
import { poolPrincipal, principalOfKey, TAKEN_OVER } from './principal-keys.ts';
import type { TaskSupervision } from './task-supervision.ts';

export interface NodeTakeoverParts {
  readonly options: ApplicationOptions;
  /** The store, or null while none exists (SQLite: a pass never creates one). */
  readonly store: () => AsyncConversationStore | null;
  readonly scheduler: Scheduler;
  /** The tool executor a taken-over task of this principal runs with (its share of the pool, `TAKEN_OVER` as its session). */
  readonly executor: (principal: Principal) => ToolExecutor;
  readonly budgets: PrincipalBudgets;
  readonly tasks: TaskSupervision;
  readonly watches: ConversationWatches;
  /** The session event log (PostgreSQL), where a taken-over task's answer goes; null on SQLite (nobody can be told). */
  readonly feed: () => SessionEventFeed | null;
}

/**
 * The directories a process's takeover continues tasks in: its workspace, and on PostgreSQL, when it
 * follows its clients' roots, the directories below it (a remote session's root lies there). On SQLite
 * only the workspace itself: processes of other projects share the file, and a stdio session's root may
 * be any directory, so a root nobody named to this process is not its to serve.
 */
export function takeoverSite(options: Pick<ApplicationOptions, 'workspace' | 'store' | 'followRoots'>, env: NodeJS.ProcessEnv = process.env): TakeoverSite {
  return { workspace: options.workspace, below: options.store?.kind === 'postgres' && (options.followRoots ?? false), model: hasServerModel(env) };
}

/** What a SQLite store opened by this process is told of an orphan: it continues one its takeover can continue, and leaves one another process may. */
export function judgeOrphans(options: Pick<ApplicationOptions, 'workspace' | 'store' | 'followRoots'>, env: NodeJS.ProcessEnv = process.env): (task: ExpiredTask) => OrphanVerdict {
  const site = takeoverSite(options, env);
  return (task) => judgeOrphan(task, site);
}

/** The process's takeover, started: its first pass a second after start (FIRST_TAKEOVER_PASS_DELAY_MS), then at the lease's pace. */
export function startNodeTakeover(parts: NodeTakeoverParts): TaskTakeover {
  const { options } = parts;
  const takeover = new TaskTakeover({
    store: parts.store,
    ...(options.taskLeaseMs === undefined ? {} : { leaseMs: options.taskLeaseMs }),
    scheduler: parts.scheduler,
    workspace: options.workspace,
    servesBelow: takeoverSite(options).below,
    ...(options.orphanPatienceMs === undefined ? {} : { patienceMs: options.orphanPatienceMs }),
    toolTimeoutMs: options.toolTimeoutMs,
    executorFor: (key) => parts.executor(principalOfKey(key)),
    env: process.env,
    logger: options.logger,
    adoptAllowance: (key) => parts.budgets.adopt(poolPrincipal(principalOfKey(key))),
    supervise: (run, key) => parts.tasks.supervise(run, TAKEN_OVER, principalOfKey(key), key),
    transcriptChanged: (conversation) => parts.watches.entryHere(conversation),
    // The answer goes on the stream of the request it answers, and ends it: the client resuming that
    // stream (on any node) gets it. Without an event log (SQLite) the transcript and status are the answer.
    answer: async (target, line) => {
      await parts.feed()?.store.appendSessionEvent(target.session, target.principal, requestStream(idKey(target.request)), line, true);
    },
  });
  takeover.start();
  return takeover;
}
