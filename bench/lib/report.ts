// What every benchmark of the suite hands to `bench/run.ts`: one section of BENCHMARKS.md, with rows
// that compare super-pi to the peer measured in the same run, as a ratio, against the target.

export interface BenchRow {
  /** What is measured, e.g. "stdio tools/call, 64 in flight: calls/s". */
  readonly measure: string;
  /** super-pi's figure, formatted with its unit. */
  readonly ours: string;
  /** The peer's figure, formatted with its unit ("" when there is no peer). */
  readonly peer: string;
  /** Which peer, e.g. "SDK", "ripgrep", "node -e". */
  readonly peerName: string;
  /** The ratio as the target states it (e.g. ours ÷ SDK for throughput, ours ÷ peer for latency), null when none. */
  readonly ratio: number | null;
  /** The target, e.g. "≥ 1.6×", "≤ 1.2×", "< 200 ms"; "" when the row is informational. */
  readonly target: string;
  /** Whether the target is met; null for informational rows. */
  readonly met: boolean | null;
}

export interface BenchSection {
  readonly title: string;
  /** The command that runs this section alone. */
  readonly command: string;
  /** How it is measured: one short paragraph (peers, workload, repetitions). */
  readonly method: string;
  readonly rows: readonly BenchRow[];
  /** Extra tables or remarks in markdown (optional detail, profile notes where a target is missed). */
  readonly notes: readonly string[];
}

/** Options every section accepts from the suite runner. */
export interface BenchOptions {
  /** A shorter run (fewer repetitions) for a smoke test; the suite's default is false. */
  readonly quick?: boolean;
  /** Progress lines go here (stderr by default), never into the report. */
  readonly progress?: (line: string) => void;
}

export type BenchSectionRunner = (options: BenchOptions) => Promise<BenchSection>;

/** True when this module is the process's entry point (so a section file can also run alone). */
export function isMain(importMetaUrl: string): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  return importMetaUrl === new URL(`file://${entry}`).href || importMetaUrl.endsWith(entry.replace(/^\.\//, ''));
}
