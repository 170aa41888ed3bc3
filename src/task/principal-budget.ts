// What one principal's harness tasks may spend on this node: tasks running at once, model turns and
// model requests per minute. Anonymous callers share one budget, so more anonymous sessions buy no more.
// Counted on the injected Clock; a principal's entry goes once it runs nothing and its windows are empty.

import { type Clock, systemClock } from '../time/clock.ts';
import { DEFAULT_MAX_TASKS_PER_PRINCIPAL, DEFAULT_MODEL_CALLS_PER_MINUTE, DEFAULT_TURNS_PER_MINUTE, TASK_BUDGET_WINDOW_MS } from '../limits.ts';

export interface TaskBudgetLimits {
  /** Tasks one principal may run at once (`--max-tasks-per-principal`). */
  readonly maxTasks: number;
  /** Model turns one principal's tasks may begin per minute (`--turns-per-minute`). */
  readonly turnsPerMinute: number;
  /** Requests to a model endpoint, retries included, per minute (`--model-calls-per-minute`). */
  readonly modelCallsPerMinute: number;
}

export const DEFAULT_TASK_BUDGET_LIMITS: TaskBudgetLimits = {
  maxTasks: DEFAULT_MAX_TASKS_PER_PRINCIPAL,
  turnsPerMinute: DEFAULT_TURNS_PER_MINUTE,
  modelCallsPerMinute: DEFAULT_MODEL_CALLS_PER_MINUTE,
};

/** Told what the task waits for while its principal's per-minute budget is spent. */
export type OnBudgetWait = (message: string) => void;

/** One running task's share of its principal's budget. */
export interface TaskAllowance {
  /** Resolves once one more model turn fits the per-minute budget (and counts it); rejects when `signal` aborts. */
  admitTurn(signal: AbortSignal, onWait: OnBudgetWait): Promise<void>;
  /** Resolves once one more request to the model endpoint fits the per-minute budget (and counts it); rejects when `signal` aborts. */
  admitModelCall(signal: AbortSignal, onWait: OnBudgetWait): Promise<void>;
  /** The task ended (answered, cancelled, gave up, failed to start): its slot is free. Idempotent. */
  release(): void;
}

/** The task was not started: the principal already runs as many as it may. */
export interface BudgetRefusal {
  readonly refused: string;
}

export function isBudgetRefusal(x: TaskAllowance | BudgetRefusal): x is BudgetRefusal {
  return 'refused' in x;
}

/** One principal's spending: tasks running, and the start times of turns and requests in the window (at most the limit of each). */
interface Ledger {
  running: number;
  readonly turns: number[];
  readonly calls: number[];
}

export class PrincipalBudgets {
  readonly #limits: TaskBudgetLimits;
  readonly #clock: Clock;
  readonly #ledgers = new Map<string, Ledger>();

  constructor(limits: TaskBudgetLimits = DEFAULT_TASK_BUDGET_LIMITS, clock: Clock = systemClock) {
    this.#limits = limits;
    this.#clock = clock;
  }

  /** Principals with an entry (a running task, or spending still in the window). */
  get principals(): number {
    return this.#ledgers.size;
  }

  /** Tasks `key` runs now. */
  running(key: string): number {
    return this.#ledgers.get(key)?.running ?? 0;
  }

  /** A slot for a new task of `key` (a principal key: `local`, `token:NAME`, `anonymous`), or why not. */
  open(key: string): TaskAllowance | BudgetRefusal {
    this.#sweep();
    const ledger = this.#ledger(key);
    if (ledger.running >= this.#limits.maxTasks) {
      const who = key === 'anonymous' ? 'anonymous callers (who share one budget)' : `principal ${key}`;
      return { refused: `harness_task refused: ${who} already run ${ledger.running} task(s) on this node, the most --max-tasks-per-principal allows (${this.#limits.maxTasks}); wait for one to finish or cancel one, then try again` };
    }
    return this.#allowance(key, ledger);
  }

  /** A task this node took over from another (already running): counted, never refused. */
  adopt(key: string): TaskAllowance {
    return this.#allowance(key, this.#ledger(key));
  }

  #allowance(key: string, ledger: Ledger): TaskAllowance {
    ledger.running++;
    let released = false;
    return {
      admitTurn: (signal, onWait) => this.#admit(ledger, ledger.turns, this.#limits.turnsPerMinute, 'model turns (--turns-per-minute)', signal, onWait),
      admitModelCall: (signal, onWait) => this.#admit(ledger, ledger.calls, this.#limits.modelCallsPerMinute, 'model requests (--model-calls-per-minute)', signal, onWait),
      release: () => {
        if (released) return;
        released = true;
        ledger.running--;
        this.#forgetIfIdle(key, ledger);
      },
    };
  }

  #ledger(key: string): Ledger {
    let ledger = this.#ledgers.get(key);
    if (!ledger) {
      ledger = { running: 0, turns: [], calls: [] };
      this.#ledgers.set(key, ledger);
    }
    return ledger;
  }

  async #admit(ledger: Ledger, window: number[], limit: number, what: string, signal: AbortSignal, onWait: OnBudgetWait): Promise<void> {
    for (;;) {
      if (signal.aborted) throw signal.reason;
      const now = this.#clock.now();
      prune(window, now);
      if (window.length < limit) {
        window.push(now);
        return;
      }
      // The oldest start leaves the window first; until then nothing fits.
      const waitMs = (window[0] as number) + TASK_BUDGET_WINDOW_MS - now;
      onWait(`waiting for the model budget: this principal's tasks used their ${limit} ${what} of the last minute; the next fits in ${Math.ceil(waitMs / 1000)} s`);
      await pause(this.#clock, waitMs, signal);
    }
  }

  /** Spending a minute old no longer counts; a principal with none, running nothing, has no entry. */
  #sweep(): void {
    for (const [key, ledger] of this.#ledgers) this.#forgetIfIdle(key, ledger);
  }

  #forgetIfIdle(key: string, ledger: Ledger): void {
    const now = this.#clock.now();
    prune(ledger.turns, now);
    prune(ledger.calls, now);
    if (ledger.running === 0 && ledger.turns.length === 0 && ledger.calls.length === 0) this.#ledgers.delete(key);
  }
}

function prune(window: number[], now: number): void {
  while (window.length > 0 && (window[0] as number) <= now - TASK_BUDGET_WINDOW_MS) window.shift();
}

/** Waits `ms` on `clock`; rejects with the signal's reason when it aborts first. */
function pause(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clock.clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = clock.setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms, { unref: true });
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
