// One MCP connection in this thread, without actors: the pure core plus an effect runner. Used where a
// plain in-thread handler is wanted (benchmarks' baseline, unit tests); the server runs sessions as
// connection actors on scheduler workers (src/connection/session.ts).

import type { EffectResult } from '../mcp/effects.ts';
import { handleEffectResult, handleMcpLine, rejectMessage, type Step } from '../mcp/handle.ts';
import type { ConnectionState } from '../mcp/state.ts';
import type { FrameEvent } from '../transports/line-framer.ts';
import { type EffectDeps, EffectRunner } from './effect-runner.ts';

export class Connection {
  #state: ConnectionState;
  readonly #send: (line: string) => void;
  readonly #effects: EffectRunner;

  constructor(state: ConnectionState, deps: EffectDeps, send: (line: string) => void) {
    this.#state = state;
    this.#send = send;
    this.#effects = new EffectRunner(deps, (result) => this.#fold(result));
  }

  get state(): ConnectionState {
    return this.#state;
  }

  receiveFrame(frame: FrameEvent): void {
    switch (frame.kind) {
      case 'line': return this.#apply(handleMcpLine(frame.text, this.#state));
      case 'oversized': return this.#apply(rejectMessage('oversized', oversizedDetail(frame.bytes, frame.limit), this.#state));
      case 'invalid-utf8': return this.#apply(rejectMessage('invalid-utf8', invalidUtf8Detail(frame.bytes), this.#state));
    }
  }

  close(): Promise<void> {
    return this.#effects.close('the connection closed');
  }

  #fold(result: EffectResult): void {
    this.#apply(handleEffectResult(result, this.#state));
  }

  #apply(step: Step): void {
    this.#state = step.state;
    for (const out of step.replies) this.#send(out.line);
    for (const effect of step.effects) this.#effects.run(effect);
  }
}

export const oversizedDetail = (bytes: number, limit: number) => `message of ${bytes} bytes exceeds the limit of ${limit} bytes (--max-message-bytes)`;
export const invalidUtf8Detail = (bytes: number) => `message of ${bytes} bytes is not valid UTF-8`;
