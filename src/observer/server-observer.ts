// What the application tells the observer and the metrics, in one place: supervisor events, sessions
// opening and closing, tool calls finishing, tasks starting, store appends. The application calls these
// hooks; the HTTP routes read snapshots, transcripts and the metrics text from here.

import type { InlineSeries } from '../actors/inline-tally.ts';
import type { Outgoing } from '../mcp/outgoing.ts';
import type { Principal } from '../mcp/state.ts';
import type { AsyncConversationStore } from '../store/async-store.ts';
import type { Entry } from '../store/store.ts';
import type { SupervisorEvent } from '../supervisor/index.ts';
import type { ToolOutcome } from '../tools/contract.ts';
import type { ToolExecutor } from '../tools/contract.ts';
import { CallWindow } from './call-window.ts';
import type * as MetricsModule from './metrics.ts';
import type { ServerMetrics, Transport } from './metrics.ts';
import { ObservedSessions, type SessionRow, type SessionView } from './observed-sessions.ts';
import { ObservedStore } from './observed-store.ts';
import { ObservedTasks } from './observed-tasks.ts';
import { MAX_SESSIONS_LISTED, MIN_CHART_SECONDS, type ObserverSnapshot, type ThreadView, workerRow } from './observer-snapshot.ts';
import { SupervisionModel } from './supervision-model.ts';
import { CHART_SECONDS } from '../limits.ts';

export interface ServerObserverOptions {
  /**
   * The metrics module (./metrics.ts, with prom-client), loaded by the caller only when metrics are on:
   * null means no /metrics and no per-call accounting (`--no-metrics`, and stdio, which never loads it);
   * the tree, sessions and tasks are still shown.
   */
  readonly metrics: typeof MetricsModule | null;
  readonly threads: () => readonly ThreadView[];
  /** Resolves once the scheduler threads have reported the inline calls they counted (before a scrape). */
  readonly flushInlineCalls: () => Promise<void>;
  readonly started: number;
}

export class ServerObserver {
  readonly metrics: ServerMetrics | null;
  readonly tree = new SupervisionModel();
  readonly sessions = new ObservedSessions();
  readonly tasks = new ObservedTasks();
  readonly calls = new CallWindow();
  readonly #options: ServerObserverOptions;
  readonly #outcomeOf: typeof MetricsModule.outcomeOf | null;
  #store: AsyncConversationStore | null = null;

  constructor(options: ServerObserverOptions) {
    this.#options = options;
    this.#outcomeOf = options.metrics?.outcomeOf ?? null;
    this.metrics = options.metrics ? new options.metrics.ServerMetrics({
      sessions: () => this.sessions.kinds(),
      taskCounts: () => this.tasks.counts(),
      deepestMailboxes: () => options.threads().map((t) => ({ thread: t.index, deepest: t.mailboxes.deepest })),
      flushInlineCalls: options.flushInlineCalls,
    }) : null;
  }

  supervisorEvent(event: SupervisorEvent): void {
    this.tree.observe(event);
    this.metrics?.supervisorEvent(event);
  }

  /** Reads the negotiated version off a session's reply (the first that carries one): true once known. */
  versionFrom(id: string, out: Outgoing): boolean {
    return this.sessions.versionFrom(id, out);
  }

  sessionOpened(id: string, info: { transport: Transport; principal: Principal; harness: string; session: SessionView }): void {
    this.sessions.opened(id, info);
  }

  sessionClosed(id: string): void {
    this.sessions.closed(id);
  }

  /** The executor with each finished call counted and timed (unchanged with metrics off). */
  instrument(execute: ToolExecutor): ToolExecutor {
    if (!this.metrics) return execute;
    return async (tool, args, harness, ctx) => {
      const started = performance.now();
      let outcome: ToolOutcome | null = null;
      try {
        outcome = await execute(tool, args, harness, ctx);
        return outcome;
      } finally {
        this.callFinished(tool, harness, outcome, started);
      }
    };
  }

  /** A call finished: `outcome` null when it threw (counted as an error). */
  callFinished(tool: string, harness: string, outcome: ToolOutcome | null, startedAt: number): void {
    if (!this.metrics) return;
    const ms = performance.now() - startedAt;
    this.metrics.toolCallFinished(tool, harness, outcome && this.#outcomeOf ? this.#outcomeOf(outcome) : 'error', ms / 1000);
    this.calls.record(ms);
  }

  /** Calls connection actors ran on their own thread (small reads), timed there and reported in a batch. */
  inlineCalls(series: readonly InlineSeries[]): void {
    if (!this.metrics) return;
    this.metrics.inlineCalls(series);
    for (const s of series) this.calls.recordAll(s.latenciesMs);
  }

  taskStarted(task: { id: string; conversationId: string; session: string; principal: Principal; ownerKey: string; harness: string }): void {
    this.tasks.started(task);
  }

  /** A task's run on this node settled (ObservedTasks.ended: one that lost its task wrote no status). */
  taskEnded(taskId: string): void {
    this.tasks.ended(taskId);
  }

  /** The store with appends timed and task progress counted. */
  observeStore(store: AsyncConversationStore): AsyncConversationStore {
    const observed = new ObservedStore(store, {
      appended: (conversationId, type, seconds) => {
        this.metrics?.storeAppended(seconds);
        this.tasks.appended(conversationId, type);
      },
      statusSet: (conversationId, status) => this.tasks.statusSet(conversationId, status),
    });
    this.#store = observed;
    return observed;
  }

  async transcript(taskId: string, afterSeq: number): Promise<Entry[] | null> {
    return this.#store ? this.tasks.transcript(this.#store, taskId, afterSeq) : null;
  }

  snapshot(): ObserverSnapshot {
    const now = Date.now();
    return {
      time: now,
      uptimeMs: now - this.#options.started,
      tree: this.tree.snapshot(),
      workers: this.#options.threads().map((t) => workerRow(t, this.tree.restartsOf('schedulers', `scheduler-${t.index}`))),
      ...listedSessions(this.sessions.rows()),
      tasks: this.tasks.rows((id) => this.tree.restartsOf(id, 'task')),
      calls: this.metrics ? this.calls.points(Math.min(CHART_SECONDS, Math.max(MIN_CHART_SECONDS, Math.ceil((now - this.#options.started) / 1000)))) : [],
      metrics: this.metrics !== null,
    };
  }
}

/** A server with thousands of sessions sends the busiest MAX_SESSIONS_LISTED, not all of them, twice a second. */
function listedSessions(rows: SessionRow[]): { sessions: SessionRow[]; sessionCount: number } {
  if (rows.length <= MAX_SESSIONS_LISTED) return { sessions: rows, sessionCount: rows.length };
  return { sessions: rows.sort((a, b) => b.inFlight - a.inFlight).slice(0, MAX_SESSIONS_LISTED), sessionCount: rows.length };
}
