// Flow control of one WebSocket, both ways: its input is not read while the session has more unhandled input
// than its budget or the socket has more queued output than it should, and the socket is closed (1008) once
// its queued output passes the backlog a client may leave unread. Every check is an integer comparison.

import type { WebSocket } from 'ws';
import type { Backlog } from './output-budget.ts';

export interface FlowLimits {
  /** Characters of the session's messages read and not yet handled before reading stops (MAX_INPUT_BACKLOG_BYTES). */
  readonly maxInputBacklogBytes: number;
  /** Bytes queued to the socket before reading stops until they have left (WS_OUTPUT_PAUSE_BYTES). */
  readonly outputPauseBytes: number;
  /** Bytes queued to the socket past which it is closed with 1008 (MAX_OUTPUT_BACKLOG_BYTES). */
  readonly maxOutputBacklogBytes: number;
}

/** What the flow reads of the session it feeds. */
export interface InputBacklog {
  readonly pendingInput: number;
  whenInputBelow(limit: number): Promise<void>;
}

export type FlowEvent =
  | { readonly kind: 'paused'; readonly why: 'input' | 'output'; readonly bytes: number }
  | { readonly kind: 'resumed' }
  | { readonly kind: 'overflow'; readonly bytes: number };

export class SocketFlow {
  readonly #ws: WebSocket;
  readonly #limits: FlowLimits;
  readonly #report: (event: FlowEvent) => void;
  /** The socket's part of the node's output budget: noted after every send and every write that left. */
  readonly #backlog: Backlog | null;
  #session: InputBacklog | null = null;
  /** Characters of frames held while the session opens. */
  #early = 0;
  #inputFull = false;
  #outputFull = false;
  #paused = false;
  /** Writes that have left since the last `progressed()`: a reader behind on its answers is still reading. */
  #writes = 0;
  /** A send left bytes queued since the last `backlogged()`. */
  #queuedSince = false;
  /** One callback for every write while the output is full (no closure per message). */
  readonly #written = (): void => this.#afterWrite();

  constructor(ws: WebSocket, limits: FlowLimits, report: (event: FlowEvent) => void, backlog: Backlog | null = null) {
    this.#ws = ws;
    this.#limits = limits;
    this.#report = report;
    this.#backlog = backlog;
  }

  /** Reading is stopped (for input or output). */
  get paused(): boolean {
    return this.#paused;
  }

  /** A frame of `chars` characters is held until the session exists. */
  held(chars: number): void {
    this.#early += chars;
    if (!this.#inputFull && this.#early > this.#limits.maxInputBacklogBytes) {
      this.#inputFull = true;
      this.#pause('input', this.#early);
    }
  }

  /** The session is open and has been given the held frames: its backlog is what counts from now on. */
  attach(session: InputBacklog): void {
    this.#session = session;
    this.#early = 0;
    this.#inputFull = false;
    this.delivered();
    this.#resumeIfClear();
  }

  /** A frame was delivered to the session: past the budget, reading stops until the session catches up. */
  delivered(): void {
    const session = this.#session;
    if (this.#inputFull || session === null || session.pendingInput <= this.#limits.maxInputBacklogBytes) return;
    this.#inputFull = true;
    this.#pause('input', session.pendingInput);
    void session.whenInputBelow(this.#limits.maxInputBacklogBytes).then(() => {
      this.#inputFull = false;
      this.#resumeIfClear();
    });
  }

  /** Sends one message; past the output backlog the socket is closed with 1008 instead. */
  send(line: string): void {
    const ws = this.#ws;
    if (ws.readyState !== ws.OPEN) return;
    // Only a write that may fill the socket carries a callback (every write, under a node budget): it
    // says when the queue has gone down.
    if (this.#backlog !== null || this.#outputFull || ws.bufferedAmount + line.length > this.#limits.outputPauseBytes) ws.send(line, this.#written);
    else ws.send(line);
    this.#backlog?.note();
    if (ws.readyState !== ws.OPEN) return;
    const queued = ws.bufferedAmount;
    if (queued > 0) this.#queuedSince = true;
    if (queued <= this.#limits.outputPauseBytes) return;
    if (queued > this.#limits.maxOutputBacklogBytes) {
      this.#report({ kind: 'overflow', bytes: queued });
      ws.close(1008, 'the client left too much output unread; reconnect and read your answers');
      return;
    }
    if (this.#outputFull) return;
    this.#outputFull = true;
    this.#pause('output', queued);
  }

  /** True when the socket moved since the last call (output left, or reading is held on the server's side). */
  progressed(): boolean {
    const moved = this.#writes > 0 || this.#inputFull;
    this.#writes = 0;
    return moved;
  }

  /**
   * True when output is queued to the socket now, or was left queued by a send since the last call: a
   * ping sent meanwhile waits behind it (in the process, then in the kernel's buffers), so its pong does
   * too, however alive the client is.
   */
  backlogged(): boolean {
    const was = this.#queuedSince || this.#ws.bufferedAmount > 0;
    this.#queuedSince = false;
    return was;
  }

  #afterWrite(): void {
    this.#writes++;
    this.#backlog?.note();
    if (!this.#outputFull || this.#ws.bufferedAmount > this.#limits.outputPauseBytes) return;
    this.#outputFull = false;
    this.#resumeIfClear();
  }

  #pause(why: 'input' | 'output', bytes: number): void {
    if (!this.#paused) {
      this.#paused = true;
      this.#ws.pause();
    }
    this.#report({ kind: 'paused', why, bytes });
  }

  #resumeIfClear(): void {
    if (!this.#paused || this.#inputFull || this.#outputFull) return;
    this.#paused = false;
    this.#ws.resume();
    this.#report({ kind: 'resumed' });
  }
}
