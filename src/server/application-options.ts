// What the application is started with (`Application.start`), its session quota default, and the error
// an `open` refused by the quota throws. Re-exported by application.ts.

import type { HarnessId } from '../harness/ids.ts';
import type { TreeIntensities } from '../supervisor/intensities.ts';
import type { ChaosOptions } from './chaos.ts';
import type { Logger } from '../log/logger.ts';
import type { ConnectionConfig, Principal } from '../mcp/state.ts';
import type { StoreLocation } from '../store/store-location.ts';
import type { TaskBudgetLimits } from '../task/principal-budget.ts';
import type { Clock } from '../time/clock.ts';
import type { QuotaLimits, Refusal } from '../transports/session-quota.ts';
import { DEFAULT_MAX_ANONYMOUS_SESSIONS, DEFAULT_MAX_SESSIONS, DEFAULT_MAX_SESSIONS_PER_PRINCIPAL } from '../limits.ts';

export interface ApplicationOptions {
  /** Key of 2026-07-28 `requestState` seals (src/cli/state-key.ts); absent, a random one for this process only. */
  readonly stateKey?: Uint8Array;
  readonly workspace: string;
  readonly harness: HarnessId;
  readonly pageSize: number;
  readonly toolTimeoutMs: number;
  /** Scheduler worker threads; 0: the actors run on the main thread (a stdio server's default). */
  readonly threads: number;
  readonly toolThreads: number;
  /** Pooled tool calls one principal may run at once (default: tool threads − 1, at least 1). */
  readonly toolShare?: number;
  readonly chaos: ChaosOptions;
  /** Restart intensity of each level of the tree (default DEFAULT_TREE_INTENSITIES; `--restart-intensity`). */
  readonly intensities?: TreeIntensities;
  readonly logger: Logger;
  readonly serverVersion: string;
  /** Anonymous remote callers may use write, edit and bash (operator opt-in). */
  readonly allowAnonymousWrites?: boolean;
  /** Anonymous remote callers may start harness_task (operator opt-in, `--allow-anonymous-tasks`). */
  readonly allowAnonymousTasks?: boolean;
  /**
   * No workspace was named by the operator: a session whose client declares roots works in its first
   * root (a remote session's only when inside `workspace`). Default false: roots are never asked.
   */
  readonly followRoots?: boolean;
  /** What one principal's harness tasks may spend on this node; default DEFAULT_TASK_BUDGET_LIMITS. */
  readonly taskBudget?: TaskBudgetLimits;
  /** Remote callers may run `bash` where no sandbox can be built (`--unsafe-bash-without-sandbox`). */
  readonly unsafeBashWithoutSandbox?: boolean;
  /** The root gave up (restart intensity reached the top): print and exit, do not spin. */
  readonly onGiveUp: (message: string) => void;
  /** Prometheus metrics and per-call accounting (default true; `--no-metrics` turns them off). */
  readonly metrics?: boolean;
  /** Where conversations are kept (`--store`); default the embedded SQLite store in `SUPERPI_HOME`. */
  readonly store?: StoreLocation;
  /** This node's name among those sharing a PostgreSQL store (`--node-id`); default host name + pid. */
  readonly nodeId?: string;
  /**
   * What everything that waits is timed by: restart intensity and shutdown timeouts, the scheduler
   * heartbeat and spawn wait, tool deadlines, task wall time, the stop grace. Default `systemClock`.
   * With a FakeClock none of these passes until the test advances it (a `stop()` that must wait out a
   * grace waits for that too).
   */
  readonly clock?: Clock;
  /** The term of a running task's lease (`--task-lease`); default TASK_LEASE_MS. */
  readonly taskLeaseMs?: number;
  /**
   * How long past its lease a task this process cannot continue (another workspace's, or none of its own
   * model) is left for a process that can, before it is marked interrupted; default ORPHAN_TASK_PATIENCE_MS.
   */
  readonly orphanPatienceMs?: number;
  /**
   * The retention of Tasks-extension tasks created on this node (`--task-ttl`), in milliseconds, and this
   * node sweeps expired ones (task/task-retention.ts); undefined (the default): none, nothing is deleted.
   */
  readonly taskTtlMs?: number;
  /** Requests one principal may have in flight on this node across its sessions (`--max-requests-in-flight-per-principal`); default MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL. */
  readonly maxRequestsInFlightPerPrincipal?: number;
  /** The session quota (`--max-sessions` and its kin); default the flags' defaults, no tokens configured. */
  readonly sessionLimits?: QuotaLimits;
}

/** The quota when none is given: the flags' defaults. */
export const DEFAULT_SESSION_LIMITS: QuotaLimits = {
  maxSessions: DEFAULT_MAX_SESSIONS,
  maxSessionsPerPrincipal: DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
  maxAnonymousSessions: DEFAULT_MAX_ANONYMOUS_SESSIONS,
  tokensConfigured: false,
};

/** Why `open` without a slot was refused: the quota's status and message. */
export class SessionRefusedError extends Error {
  readonly status: number;

  constructor(refusal: Refusal) {
    super(refusal.message);
    this.status = refusal.status;
  }
}

/**
 * The connection config of each session, one object for every session whose config is equal (the last
 * principal's is kept: the sessions of a node differ at most by principal). Every session kept its own
 * copy before, ~0.13 KB each; the core never changes a config.
 */
export class SessionConfigs {
  readonly #options: ApplicationOptions;
  #last: { key: string; config: ConnectionConfig } | null = null;

  constructor(options: ApplicationOptions) {
    this.#options = options;
  }

  of(principal: Principal): ConnectionConfig {
    const key = JSON.stringify(principal);
    if (this.#last?.key === key) return this.#last.config;
    const o = this.#options;
    const config: ConnectionConfig = {
      server: { name: 'super-pi', version: o.serverVersion },
      harness: o.harness,
      workspace: o.workspace,
      principal,
      pageSize: o.pageSize,
      allowAnonymousWrites: o.allowAnonymousWrites ?? false,
      allowAnonymousTasks: o.allowAnonymousTasks ?? false,
      // A remote caller's roots may only narrow the workspace: a path its principal names is no grant.
      roots: !(o.followRoots ?? false) ? 'ignore' : principal.kind === 'local' ? 'follow' : 'narrow',
    };
    this.#last = { key, config };
    return config;
  }
}
