// The tool calls a scheduler thread ran inline (inline-effects.ts), counted on that thread with plain
// numbers and reported to the main thread in batches. A message per call (a structured clone on this
// thread, another on the main thread, then the metrics per call) cost as much as the call itself; a
// batch costs one message per MAX_INLINE_BATCH calls, or per INLINE_REPORT_MS, whichever comes first.

/** Calls one report carries at most: past it the thread reports at once (bounds the latency buffer). */
export const MAX_INLINE_BATCH = 1024;
/** How long a counted call waits at most before it is reported (the chart and /metrics lag by this at most). */
export const INLINE_REPORT_MS = 250;

/** The calls of one tool under one harness since the last report. */
export interface InlineSeries {
  readonly tool: string;
  readonly harness: string;
  readonly ok: number;
  readonly error: number;
  /** Each call's duration, milliseconds, in the order they ran. */
  readonly latenciesMs: readonly number[];
}

interface OpenSeries {
  readonly tool: string;
  readonly harness: string;
  ok: number;
  error: number;
  latenciesMs: number[];
}

/** Schedules `fn` once after `ms` (unref'd: a pending report never keeps a thread alive); returns its cancel. */
export type Schedule = (fn: () => void, ms: number) => () => void;

const unrefTimeout: Schedule = (fn, ms) => {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

export class InlineTally {
  /** By tool, then harness: two names from the catalogues, so a handful of entries. */
  readonly #series = new Map<string, Map<string, OpenSeries>>();
  #pending = 0;
  #cancelTimer: (() => void) | null = null;
  readonly #report: (series: InlineSeries[]) => void;
  readonly #schedule: Schedule;

  constructor(report: (series: InlineSeries[]) => void, schedule: Schedule = unrefTimeout) {
    this.#report = report;
    this.#schedule = schedule;
  }

  record(tool: string, harness: string, isError: boolean, ms: number): void {
    let byHarness = this.#series.get(tool);
    if (!byHarness) this.#series.set(tool, (byHarness = new Map()));
    let s = byHarness.get(harness);
    if (!s) byHarness.set(harness, (s = { tool, harness, ok: 0, error: 0, latenciesMs: [] }));
    if (isError) s.error++;
    else s.ok++;
    s.latenciesMs.push(ms);
    this.#pending++;
    if (this.#pending >= MAX_INLINE_BATCH) this.flush();
    else this.#cancelTimer ??= this.#schedule(() => {
      this.#cancelTimer = null;
      this.flush();
    }, INLINE_REPORT_MS);
  }

  /** Reports what was counted since the last report (nothing when nothing was). */
  flush(): void {
    this.#cancelTimer?.();
    this.#cancelTimer = null;
    if (this.#pending === 0) return;
    const out: InlineSeries[] = [];
    for (const byHarness of this.#series.values()) for (const s of byHarness.values()) if (s.latenciesMs.length > 0) out.push(s);
    // Fresh series from here on: the reported ones now belong to the message being sent.
    this.#series.clear();
    this.#pending = 0;
    this.#report(out);
  }
}

let threadTally: InlineTally | null = null;

/** The scheduler thread installs its tally at boot; a thread without one (tests calling behaviours directly) counts nothing. */
export function installInlineTally(tally: InlineTally | null): void {
  threadTally = tally;
}

/** Uninstalls `tally` if it is still this thread's (a main-thread host that ends, while a newer one may have taken over). */
export function uninstallInlineTally(tally: InlineTally): void {
  if (threadTally === tally) threadTally = null;
}

/** Counts one call this thread ran inline. */
export function recordInlineCall(tool: string, harness: string, isError: boolean, ms: number): void {
  threadTally?.record(tool, harness, isError, ms);
}

/** Reports at once what this thread counted (the main thread asks before a scrape). */
export function flushInlineTally(): void {
  threadTally?.flush();
}
