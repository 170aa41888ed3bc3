// Ends sessions of one transport that nobody has used for a while: no request in flight, nothing the
// transport holds open (an HTTP session's GET stream, a POST waiting), and no use (`touch`) for longer
// than the idle limit. HTTP sessions need it — a client may vanish without DELETE; a WebSocket session
// ends with its socket. Time comes from a Clock, so a test moves it instead of waiting.

import type { Clock } from '../supervisor/clock.ts';
import type { SessionHost, TransportName } from './session-host.ts';
import { DEFAULT_SESSION_IDLE_MS, REAPER_MAX_INTERVAL_MS } from '../limits.ts';


export interface SessionReaperOptions {
  readonly host: Pick<SessionHost, 'sessions' | 'close'>;
  readonly clock: Clock;
  readonly transport: TransportName;
  readonly idleMs?: number;
}

export class SessionReaper {
  readonly #options: SessionReaperOptions;
  readonly #idleMs: number;
  #timer: unknown = null;
  #stopped = false;

  constructor(options: SessionReaperOptions) {
    this.#options = options;
    this.#idleMs = options.idleMs ?? DEFAULT_SESSION_IDLE_MS;
    this.#arm();
  }

  /** Looks once: ends every session of the transport idle past the limit. */
  reap(): void {
    const { host, clock, transport } = this.#options;
    const now = clock.now();
    for (const s of [...host.sessions()]) {
      if (s.transport === transport && !s.busy() && now - s.lastActivity > this.#idleMs) void host.close(s.id);
    }
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== null) this.#options.clock.clearTimeout(this.#timer);
    this.#timer = null;
  }

  #arm(): void {
    if (this.#stopped) return;
    this.#timer = this.#options.clock.setTimeout(() => {
      this.reap();
      this.#arm();
    }, Math.min(REAPER_MAX_INTERVAL_MS, this.#idleMs));
    // A process timer must not keep the process alive by itself (a fake clock's handle is a number).
    const handle = this.#timer as { unref?: () => void };
    if (typeof handle === 'object' && handle !== null) handle.unref?.();
  }
}
