// The server's Prometheus metrics (prom-client, one registry per application; the two per-call metrics are
// counted apart, on plain numbers, and appended to its text: tool-call-tally.ts). Every label value comes
// from a fixed set named here — tool and harness names from their catalogues, supervisor levels,
// transports, principal kinds, task statuses — and anything else becomes "other": a label never carries
// a token, a path, a prompt or any other text a caller chose.

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { isHarnessId } from '../harness/ids.ts';
import type { SupervisorEvent } from '../supervisor/index.ts';
import { isToolName } from '../tools/definition.ts';
import { CONVERSATION_STATUSES, type ConversationStatus } from '../store/store.ts';
import type { ToolOutcome } from '../tools/contract.ts';
import type { InlineSeries } from '../actors/inline-tally.ts';
import { type CallOutcome, ToolCallTally } from './tool-call-tally.ts';

export type { CallOutcome } from './tool-call-tally.ts';
export type Transport = 'stdio' | 'http' | 'websocket';
export type PrincipalKind = 'local' | 'token' | 'anonymous';

/** What the gauges read at scrape time (nothing is counted twice: the application is the source). */
export interface MetricsSource {
  sessions(): Iterable<{ transport: Transport; principal: PrincipalKind }>;
  taskCounts(): ReadonlyMap<ConversationStatus, number>;
  deepestMailboxes(): Iterable<{ thread: number; deepest: number }>;
  /** Resolves once the scheduler threads have reported the inline calls they ran so far (inline-tally.ts). */
  flushInlineCalls(): Promise<void>;
}

/** Buckets of tool-call latency, seconds: from a cached read to a long bash command or a task. */
export const TOOL_CALL_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** Buckets of one store append, seconds (a WAL-mode SQLite insert is sub-millisecond when healthy). */
export const STORE_APPEND_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5];

/**
 * How often the event-loop delay histogram (nodejs_eventloop_lag_p50/p90/p99…) samples the loop, ms.
 * prom-client's default, 10 ms, is a timer waking the main thread 100 times a second: measured at 3.5-6 ms
 * of main-thread CPU per second on an idle server, the largest part of the metrics' cost on a loaded
 * machine. At 100 ms it is ~0.5 ms/s; any stall longer than this is still measured in full (a shorter one
 * is caught in proportion to its length), and nodejs_eventloop_lag_seconds is measured at each scrape anyway.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

const SUPERVISOR_LEVELS: ReadonlySet<string> = new Set(['root', 'schedulers', 'tools', 'sessions', 'tasks']);

/** The supervisor level of a supervisor name: per-session and per-task supervisors fold into one level each. */
export function supervisorLevel(name: string): string {
  if (SUPERVISOR_LEVELS.has(name)) return name;
  if (/^session-\d+$/.test(name)) return 'session';
  if (/^task-\d+$/.test(name)) return 'task';
  return 'other';
}

export function toolLabel(name: string): string {
  return isToolName(name) ? name : 'other';
}

export function harnessLabel(name: string): string {
  return isHarnessId(name) ? name : 'other';
}

/** ok, error, or denied (a refusal by the harness or remote policy, or by the person asked). */
export function outcomeOf(outcome: ToolOutcome): CallOutcome {
  if (!outcome.isError) return 'ok';
  return /^(Denied\b|Not run: )/.test(outcome.text) ? 'denied' : 'error';
}

export class ServerMetrics {
  /** Everything but the two per-call metrics, which are counted apart on plain numbers (tool-call-tally.ts). */
  readonly registry = new Registry();
  readonly #calls = new ToolCallTally(TOOL_CALL_BUCKETS);
  readonly #source: MetricsSource;
  readonly #actorRestarts: Counter<'level'>;
  readonly #workerRestarts: Counter;
  readonly #storeAppend: Histogram;

  constructor(source: MetricsSource) {
    this.#source = source;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    new Gauge({
      name: 'superpi_sessions', help: 'Open MCP sessions, by transport and principal kind.', labelNames: ['transport', 'principal'] as const, registers,
      collect() {
        this.reset();
        for (const s of source.sessions()) this.inc({ transport: s.transport, principal: s.principal });
      },
    });
    new Gauge({
      name: 'superpi_tasks', help: 'Harness tasks this process has run, by their current status.', labelNames: ['status'] as const, registers,
      collect() {
        const counts = source.taskCounts();
        for (const status of CONVERSATION_STATUSES) this.set({ status }, counts.get(status) ?? 0);
      },
    });
    new Gauge({
      name: 'superpi_mailbox_depth', help: 'The deepest actor mailbox on each scheduler thread (as of its last heartbeat).', labelNames: ['thread'] as const, registers,
      collect() {
        this.reset();
        for (const t of source.deepestMailboxes()) this.set({ thread: String(t.thread) }, t.deepest);
      },
    });
    this.#actorRestarts = new Counter({ name: 'superpi_actor_restarts_total', help: 'Children restarted by a supervisor, by supervisor level.', labelNames: ['level'] as const, registers });
    this.#workerRestarts = new Counter({ name: 'superpi_worker_restarts_total', help: 'Scheduler worker threads restarted.', registers });
    this.#storeAppend = new Histogram({ name: 'superpi_store_append_duration_seconds', help: 'Duration of one transcript append to the store.', buckets: STORE_APPEND_BUCKETS, registers });
  }

  toolCallFinished(tool: string, harness: string, outcome: CallOutcome, seconds: number): void {
    const t = toolLabel(tool);
    this.#calls.count(t, harnessLabel(harness), outcome);
    this.#calls.observe(t, seconds);
  }

  /** A scheduler thread's batch of calls its actors ran inline. */
  inlineCalls(series: readonly InlineSeries[]): void {
    for (const s of series) {
      const t = toolLabel(s.tool);
      const h = harnessLabel(s.harness);
      if (s.ok > 0) this.#calls.count(t, h, 'ok', s.ok);
      if (s.error > 0) this.#calls.count(t, h, 'error', s.error);
      for (const ms of s.latenciesMs) this.#calls.observe(t, ms / 1000);
    }
  }

  supervisorEvent(event: SupervisorEvent): void {
    if (event.type !== 'child-restarted') return;
    this.#actorRestarts.inc({ level: supervisorLevel(event.supervisor) });
    if (event.supervisor === 'schedulers') this.#workerRestarts.inc();
  }

  storeAppended(seconds: number): void {
    this.#storeAppend.observe(seconds);
  }

  /** The exposition text, and its content type; calls still counted on the threads are fetched first. */
  async scrape(): Promise<{ contentType: string; text: string }> {
    await this.#source.flushInlineCalls();
    return { contentType: this.registry.contentType, text: `${await this.registry.metrics()}\n${this.#calls.exposition()}` };
  }
}
