// Small numeric helpers for the benchmarks: a monotonic clock, percentiles, and markdown tables.

/** Microseconds since an arbitrary origin (monotonic). */
export const nowUs = (): number => Number(process.hrtime.bigint()) / 1000;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Nearest-rank percentile (p in 0..100) of the values; sorts a copy. */
export function percentile(values: ArrayLike<number>, p: number): number {
  const sorted = Float64Array.from(values).sort();
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

/** A number with a sensible number of digits for a table cell. */
export function fmt(n: number, digits?: number): string {
  if (!Number.isFinite(n)) return 'n/a';
  const d = digits ?? (Math.abs(n) >= 100 ? 0 : Math.abs(n) >= 10 ? 1 : 2);
  return n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
}

export const signed = (n: number): string => (n >= 0 ? `+${fmt(n)}` : `−${fmt(-n)}`);

export const ratio = (a: number, b: number): string => `${fmt(a / b, a / b >= 10 ? 1 : 2)}×`;

export const kb = (bytes: number): string => `${fmt(bytes / 1024, 2)} KB`;

/** A markdown table with padded columns (readable as plain text too). */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? `${'-'.repeat(w + 1)}-` : `-${'-'.repeat(w)}:`)).join('|')}|`;
  return [line(headers), rule, ...rows.map(line)].join('\n');
}
