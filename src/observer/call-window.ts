// Calls per second and their latency over the last minutes, for the observer's chart: one bucket per
// second in a ring, each keeping a bounded sample of latencies, so memory is fixed however busy the server is.

/** Seconds of history the chart shows. */
export const CALL_WINDOW_SECONDS = 300;
/** Latencies kept per second (a reservoir sample past this): p99 of a busier second is an estimate. */
export const MAX_SAMPLES_PER_SECOND = 512;

interface Bucket {
  second: number;
  count: number;
  samples: number[];
}

export interface CallPoint {
  /** Unix time, whole seconds. */
  readonly t: number;
  readonly calls: number;
  /** Milliseconds; null in a second without calls. */
  readonly p50: number | null;
  readonly p99: number | null;
}

export class CallWindow {
  readonly #ring: Bucket[] = Array.from({ length: CALL_WINDOW_SECONDS }, () => ({ second: -1, count: 0, samples: [] }));
  readonly #now: () => number;
  readonly #random: () => number;

  constructor(now: () => number = Date.now, random: () => number = Math.random) {
    this.#now = now;
    this.#random = random;
  }

  record(latencyMs: number): void {
    this.#add(this.#bucket(Math.floor(this.#now() / 1000)), latencyMs);
  }

  /** Calls reported together (a scheduler thread's batch): counted in the second they arrive. */
  recordAll(latenciesMs: readonly number[]): void {
    if (latenciesMs.length === 0) return;
    const bucket = this.#bucket(Math.floor(this.#now() / 1000));
    for (const ms of latenciesMs) this.#add(bucket, ms);
  }

  #add(bucket: Bucket, latencyMs: number): void {
    bucket.count++;
    if (bucket.samples.length < MAX_SAMPLES_PER_SECOND) bucket.samples.push(latencyMs);
    else {
      const slot = Math.floor(this.#random() * bucket.count);
      if (slot < MAX_SAMPLES_PER_SECOND) bucket.samples[slot] = latencyMs;
    }
  }

  /** The last `seconds` whole seconds, oldest first (the current, unfinished second excluded). */
  points(seconds = CALL_WINDOW_SECONDS - 1): CallPoint[] {
    const current = Math.floor(this.#now() / 1000);
    const out: CallPoint[] = [];
    for (let t = current - Math.min(seconds, CALL_WINDOW_SECONDS - 1); t < current; t++) {
      const b = this.#ring[t % CALL_WINDOW_SECONDS] as Bucket;
      if (b.second !== t || b.count === 0) {
        out.push({ t, calls: 0, p50: null, p99: null });
        continue;
      }
      const sorted = [...b.samples].sort((x, y) => x - y);
      out.push({ t, calls: b.count, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) });
    }
    return out;
  }

  #bucket(second: number): Bucket {
    const b = this.#ring[second % CALL_WINDOW_SECONDS] as Bucket;
    if (b.second !== second) {
      b.second = second;
      b.count = 0;
      b.samples = [];
    }
    return b;
  }
}

/** Nearest-rank quantile of sorted values. */
export function quantile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}
