// The observer's live event streams: how many are open (in all and per viewer), one snapshot per tick to
// each, and the end of a stream whose client has stopped keeping up, so no viewer holds the pool.

import type { ServerResponse } from 'node:http';
import {
  MAX_OBSERVER_BACKLOG_BYTES, MAX_OBSERVER_STREAMS, MAX_OBSERVER_STREAMS_PER_VIEWER, OBSERVER_STREAM_LAG_MS, OBSERVER_UPDATE_MS,
} from '../limits.ts';

/** The bounds of the streams; each defaults to its named limit in src/limits.ts (tests shorten them). */
export interface ObserverStreamLimits {
  readonly maxStreams: number;
  readonly maxStreamsPerViewer: number;
  readonly backlogBytes: number;
  readonly lagMs: number;
  readonly updateMs: number;
}

export const OBSERVER_STREAM_LIMITS: ObserverStreamLimits = {
  maxStreams: MAX_OBSERVER_STREAMS, maxStreamsPerViewer: MAX_OBSERVER_STREAMS_PER_VIEWER,
  backlogBytes: MAX_OBSERVER_BACKLOG_BYTES, lagMs: OBSERVER_STREAM_LAG_MS, updateMs: OBSERVER_UPDATE_MS,
};

/** Why a stream was not opened: the status and message to answer with. */
export interface StreamRefusal {
  readonly status: 429 | 503;
  readonly message: string;
}

interface Stream {
  readonly viewer: string;
  /** When a snapshot was first skipped since the client last had nothing unread (null: it keeps up). */
  laggingSince: number | null;
}

export class ObserverStreams {
  readonly #limits: ObserverStreamLimits;
  readonly #snapshot: () => string;
  readonly #now: () => number;
  readonly #streams = new Map<ServerResponse, Stream>();
  readonly #perViewer = new Map<string, number>();
  #timer: NodeJS.Timeout | null = null;

  /** `snapshot` is the framed data every stream is sent at each tick. */
  constructor(snapshot: () => string, limits: Partial<ObserverStreamLimits> = {}, now: () => number = Date.now) {
    this.#snapshot = snapshot;
    this.#limits = { ...OBSERVER_STREAM_LIMITS, ...limits };
    this.#now = now;
  }

  /** Why `viewer` may not open another stream now, or null when it may. */
  refusal(viewer: string): StreamRefusal | null {
    const { maxStreams, maxStreamsPerViewer } = this.#limits;
    if (this.#streams.size >= maxStreams) return { status: 503, message: `Service Unavailable: MAX_OBSERVER_STREAMS (${maxStreams}) observer streams are open` };
    if ((this.#perViewer.get(viewer) ?? 0) >= maxStreamsPerViewer) {
      return { status: 429, message: `Too Many Requests: MAX_OBSERVER_STREAMS_PER_VIEWER (${maxStreamsPerViewer}) observer streams of this viewer are open; close one` };
    }
    return null;
  }

  /** Counts `res` (its headers and first snapshot written) as `viewer`'s until it closes; ticks while any is open. */
  add(res: ServerResponse, viewer: string): void {
    this.#streams.set(res, { viewer, laggingSince: null });
    this.#perViewer.set(viewer, (this.#perViewer.get(viewer) ?? 0) + 1);
    res.once('close', () => this.#remove(res));
    // One snapshot per tick for every watcher, and none while nobody watches.
    this.#timer ??= setInterval(() => this.#broadcast(), this.#limits.updateMs);
    this.#timer.unref();
  }

  /** Ends every stream (the server is stopping). */
  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    for (const res of [...this.#streams.keys()]) res.end();
  }

  #remove(res: ServerResponse): void {
    const stream = this.#streams.get(res);
    if (stream === undefined) return;
    this.#streams.delete(res);
    const left = (this.#perViewer.get(stream.viewer) ?? 1) - 1;
    if (left === 0) this.#perViewer.delete(stream.viewer);
    else this.#perViewer.set(stream.viewer, left);
    if (this.#streams.size === 0 && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = null;
    }
  }

  /**
   * A client with nothing unread is sent the snapshot and counts as keeping up. One with a backlog past the
   * bound is skipped (nothing buffered further); if it has not once caught up within `lagMs` of the first
   * skip, its stream is ended, so a client that reads a trickle — enough for the send timeout never to
   * fire — gives its slot back. Between the two, the snapshot is written and the lag clock runs on.
   */
  #broadcast(): void {
    const data = this.#snapshot();
    const now = this.#now();
    for (const [res, stream] of this.#streams) {
      if (res.writableLength === 0) stream.laggingSince = null;
      if (res.writableLength < this.#limits.backlogBytes) {
        res.write(data);
        continue;
      }
      stream.laggingSince ??= now;
      if (now - stream.laggingSince >= this.#limits.lagMs) res.destroy();
    }
  }
}
