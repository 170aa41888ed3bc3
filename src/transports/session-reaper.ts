// Ends sessions of one transport that nobody has used for a while: no request in flight, nothing the
// transport holds open (an HTTP session's GET stream, a POST waiting; a WebSocket session's subscriptions),
// and no use (`touch`) for longer than the idle limit. HTTP sessions need it because a client may vanish
// without DELETE; WebSocket sessions because a live client may hold its socket open and say nothing for
// good, keeping its quota slot (a dead one is found by the ping). A session found busy at a look counts as
// used then, so the idle time runs from the end of its last long call or stream, not from its start.
// Time comes from a Clock, so a test moves it instead of waiting.

import type { Clock } from '../supervisor/clock.ts';
import type { HostedSession, SessionHost, TransportName } from './session-host.ts';
import { DEFAULT_SESSION_IDLE_MS, REAPER_MAX_INTERVAL_MS } from '../limits.ts';


export interface SessionReaperOptions {
  readonly host: Pick<SessionHost, 'sessions' | 'close'>;
  readonly clock: Clock;
  readonly transport: TransportName;
  readonly idleMs?: number;
  /** Ends an idle session (a transport that tells its client why first). Default: `host.close`. */
  readonly end?: (session: HostedSession, idleMs: number) => void;
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
    const { host, clock, transport, end } = this.#options;
    const now = clock.now();
    for (const s of [...host.sessions()]) {
      if (s.transport !== transport) continue;
      if (s.busy()) s.touch();
      else if (now - s.lastActivity > this.#idleMs) {
        if (end) end(s, this.#idleMs);
        else void host.close(s.id);
      }
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
