// superpi_tool_calls_total and superpi_tool_call_duration_seconds, counted on plain numbers and rendered
// in the Prometheus text format only when scraped. prom-client hashes the label set on every `inc` and
// `observe` (children too), which on the read path cost more than the read; here a call is two Map
// lookups and a few increments. Label values are the fixed-set labels of metrics.ts, escaped anyway.

export type CallOutcome = 'ok' | 'error' | 'denied';

const OUTCOMES: readonly CallOutcome[] = ['ok', 'error', 'denied'];

export const TOOL_CALLS_NAME = 'superpi_tool_calls_total';
export const TOOL_CALLS_HELP = 'Finished tool calls, by tool, harness and outcome (ok, error, denied).';
export const TOOL_CALL_DURATION_NAME = 'superpi_tool_call_duration_seconds';
export const TOOL_CALL_DURATION_HELP = 'Tool call duration, by tool.';

interface ToolSeries {
  /** By harness label: counts by outcome, in OUTCOMES order. */
  readonly byHarness: Map<string, number[]>;
  /** Observations per bucket (not cumulative); the last slot is above the highest bound (+Inf). */
  readonly buckets: number[];
  sum: number;
  count: number;
}

export class ToolCallTally {
  /** Upper bounds, seconds, ascending. */
  readonly #bounds: readonly number[];
  /** By tool label (a catalogue name or "other"). */
  readonly #byTool = new Map<string, ToolSeries>();

  constructor(bounds: readonly number[]) {
    this.#bounds = bounds;
  }

  /** `count` calls of `tool` under `harness` ended with `outcome` (labels already mapped to their fixed sets). */
  count(tool: string, harness: string, outcome: CallOutcome, count = 1): void {
    const series = this.#series(tool);
    let counts = series.byHarness.get(harness);
    if (!counts) series.byHarness.set(harness, (counts = [0, 0, 0]));
    const i = OUTCOMES.indexOf(outcome);
    counts[i] = (counts[i] as number) + count;
  }

  /** One call of `tool` took `seconds`. */
  observe(tool: string, seconds: number): void {
    const series = this.#series(tool);
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && seconds > (bounds[i] as number)) i++;
    series.buckets[i] = (series.buckets[i] as number) + 1;
    series.sum += seconds;
    series.count++;
  }

  /** Both metrics in the Prometheus text format (0.0.4), each with its HELP and TYPE lines even when empty. */
  exposition(): string {
    const counter = [`# HELP ${TOOL_CALLS_NAME} ${TOOL_CALLS_HELP}`, `# TYPE ${TOOL_CALLS_NAME} counter`];
    const histogram = [`# HELP ${TOOL_CALL_DURATION_NAME} ${TOOL_CALL_DURATION_HELP}`, `# TYPE ${TOOL_CALL_DURATION_NAME} histogram`];
    for (const [tool, series] of this.#byTool) {
      const t = `tool="${escapeLabel(tool)}"`;
      for (const [harness, counts] of series.byHarness) {
        OUTCOMES.forEach((outcome, i) => {
          const n = counts[i] as number;
          if (n > 0) counter.push(`${TOOL_CALLS_NAME}{${t},harness="${escapeLabel(harness)}",outcome="${outcome}"} ${n}`);
        });
      }
      if (series.count === 0) continue;
      let cumulative = 0;
      this.#bounds.forEach((bound, i) => {
        cumulative += series.buckets[i] as number;
        histogram.push(`${TOOL_CALL_DURATION_NAME}_bucket{le="${bound}",${t}} ${cumulative}`);
      });
      histogram.push(`${TOOL_CALL_DURATION_NAME}_bucket{le="+Inf",${t}} ${series.count}`);
      histogram.push(`${TOOL_CALL_DURATION_NAME}_sum{${t}} ${series.sum}`);
      histogram.push(`${TOOL_CALL_DURATION_NAME}_count{${t}} ${series.count}`);
    }
    return `${counter.join('\n')}\n\n${histogram.join('\n')}\n`;
  }

  #series(tool: string): ToolSeries {
    let series = this.#byTool.get(tool);
    if (!series) this.#byTool.set(tool, (series = { byHarness: new Map(), buckets: new Array<number>(this.#bounds.length + 1).fill(0), sum: 0, count: 0 }));
    return series;
  }
}

/** A label value as the text format wants it: backslash, double quote and newline escaped. */
export function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
