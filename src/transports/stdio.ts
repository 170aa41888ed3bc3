// The stdio transport: newline-delimited JSON on stdin/stdout. stdout carries protocol messages only;
// everything else goes to the logger (stderr). Streams are injected so tests need no process.

import type { Readable, Writable } from 'node:stream';
import type { Outgoing } from '../mcp/outgoing.ts';
import { Backpressure } from './backpressure.ts';
import { LineFramer } from './line-framer.ts';
import type { SessionHost } from './session-host.ts';
import { EOF_DRAIN_MS, GIVE_UP_LINGER_MAX_MS, GIVE_UP_QUIET_MS, GIVE_UP_QUIET_TICKS, OUTPUT_FLUSH_MS, STDIO_REPLIES_PER_WRITE } from '../limits.ts';


export interface StdioTransportOptions {
  readonly input: Readable;
  readonly output: Writable;
  readonly maxMessageBytes: number;
  /** Output held while the host does not read it; past it the host is treated as gone. Default MAX_OUTPUT_BACKLOG_BYTES. */
  readonly maxOutputBacklogBytes?: number;
  /** When aborted (SIGTERM): stop reading, let requests in flight finish for `stopDrainMs`, then end. */
  readonly stop?: AbortSignal;
  readonly stopDrainMs?: number;
  /** Aborted while draining: answer what is left now. */
  readonly hurry?: AbortSignal;
}

/**
 * Serves one session, the local user's, over a pair of streams; resolves when the input ends or `stop` is
 * aborted, and the session has drained, answered what is left, closed, and its output is flushed — with
 * `gave-up` when the session was given up (the caller exits non-zero), else `ended`. Input is not read
 * until the session is open (the stream buffers it meanwhile).
 */
export async function serveStdio(options: StdioTransportOptions, host: Pick<SessionHost, 'open' | 'close'>): Promise<'ended' | 'gave-up'> {
  const framer = new LineFramer(options.maxMessageBytes);
  const out = new Backpressure(options.output, options.input, options.maxOutputBacklogBytes);
  // One channel: every message goes out in order, whatever it answers. The lines sent in one turn (a
  // drained mailbox answers up to dozens) leave in writes of STDIO_REPLIES_PER_WRITE, the last at the end
  // of the turn: one system call per batch instead of one per line, no line waits past the current job,
  // and a host with many calls in flight works on the first batch while the session makes the next (the
  // main-thread actor host hands each handled message's output on at once: main-thread-host.ts).
  // Backpressure still holds them while the host is not reading.
  let pending: string[] = [];
  const writePending = (): void => {
    if (pending.length === 0) return;
    const lines = pending;
    pending = [];
    out.send(`${lines.join('\n')}\n`);
  };
  const send = (message: Outgoing): void => {
    pending.push(message.line);
    if (pending.length === 1) queueMicrotask(writePending);
    else if (pending.length >= STDIO_REPLIES_PER_WRITE) writePending();
  };
  let giveUp: () => void = () => undefined;
  const gaveUp = new Promise<void>((resolve) => (giveUp = resolve));
  let givenUp = false;
  // The host ended the session (it is shutting down) before or while this serves it: serving ends too.
  let hostClosed: (() => void) | null = null;
  let closedEarly = false;
  // stdio has exactly one session: if it is given up, what it was sent is answered, then serving ends.
  const session = await host.open({
    principal: { kind: 'local' },
    transport: 'stdio',
    send,
    onGiveUp: () => {
      givenUp = true;
      giveUp();
    },
    // A given-up session leaves the registry at once; serving lingers for the host's requests on their way.
    onEnded: () => {
      if (givenUp) return;
      if (hostClosed) hostClosed();
      else closedEarly = true;
    },
  });
  const hurried = new Promise<void>((resolve) => {
    if (options.hurry?.aborted) resolve();
    options.hurry?.addEventListener('abort', () => resolve(), { once: true });
  });
  return new Promise((resolve) => {
    let ending = false;
    let outcome: 'ended' | 'gave-up' = 'ended';
    let reads = 0;
    const end = async (drainMs: number, why: string): Promise<void> => {
      await Promise.race([session.drain(drainMs), hurried]);
      session.answerInFlight(why);
      await host.close(session.id);
      writePending();
      await out.flush(OUTPUT_FLUSH_MS);
      resolve(outcome);
    };
    const onData = (chunk: Buffer): void => {
      reads++;
      for (const frame of framer.push(chunk)) session.deliver(frame);
    };
    void gaveUp.then(async () => {
      if (ending) return;
      outcome = 'gave-up';
      // The session answers what arrives now by itself; wait for the host's requests already on their way.
      const until = Date.now() + GIVE_UP_LINGER_MAX_MS;
      let quietTicks = 0;
      while (!ending && Date.now() < until && quietTicks < GIVE_UP_QUIET_TICKS) {
        const readBefore = reads;
        // Between two timer turns the loop polls the pipe: input waiting there is read before the next check.
        await new Promise((r) => setTimeout(r, GIVE_UP_QUIET_MS / GIVE_UP_QUIET_TICKS));
        // While the host is not reading our output, its input is paused on purpose: that is not quiet.
        quietTicks = reads === readBefore && !out.full ? quietTicks + 1 : 0;
      }
      if (ending) return;
      ending = true;
      out.stopReading();
      options.input.off('data', onData);
      options.input.off('end', onEnd);
      void end(0, 'the session was given up');
    });
    const onEnd = (): void => {
      if (ending) return;
      ending = true;
      for (const frame of framer.end()) session.deliver(frame);
      void end(EOF_DRAIN_MS, 'the host closed the input');
    };
    const onStop = (): void => {
      if (ending) return;
      ending = true;
      // Nothing more is read: a partial line is not a request yet, and later requests would not be finished.
      out.stopReading();
      options.input.off('data', onData);
      options.input.off('end', onEnd);
      options.input.destroy();
      void end(options.stopDrainMs ?? EOF_DRAIN_MS, 'the server is shutting down');
    };
    hostClosed = (): void => {
      if (ending) return;
      ending = true;
      out.stopReading();
      options.input.off('data', onData);
      options.input.off('end', onEnd);
      void end(0, 'the server closed the session');
    };
    options.input.on('data', onData);
    options.input.on('end', onEnd);
    if (closedEarly) hostClosed();
    else if (options.stop?.aborted) onStop();
    else options.stop?.addEventListener('abort', onStop, { once: true });
  });
}
