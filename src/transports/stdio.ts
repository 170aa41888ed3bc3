// The stdio transport: newline-delimited JSON on stdin/stdout. stdout carries protocol messages only;
// everything else goes to the logger (stderr). Streams are injected so tests need no process.

import type { Readable, Writable } from 'node:stream';
import { LineFramer } from './line-framer.ts';

/** When the host closes stdin, requests already sent get this long to be answered before the session closes. */
export const EOF_DRAIN_MS = 2000;
/** Once the session has closed, how long the last replies may take to leave through the output stream. */
export const OUTPUT_FLUSH_MS = 2000;
/**
 * After the session was given up: the server goes on reading (and answering, with the give-up error) until
 * the input has been quiet this long, so requests the host had already sent get their answer before the
 * server exits — and at most GIVE_UP_LINGER_MAX_MS in all, so a host that keeps sending cannot keep it alive.
 */
export const GIVE_UP_QUIET_MS = 200;
export const GIVE_UP_LINGER_MAX_MS = 2000;

export interface LineSession {
  receiveFrame(frame: ReturnType<LineFramer['push']>[number]): void;
  /** Resolves when no request is in flight, or after `ms`. */
  drain?(ms: number): Promise<void>;
  /** Answers every request still in flight with an error saying why: nothing is left unanswered. */
  answerInFlight?(reason: string): void;
  close(): Promise<void>;
  /** Resolves if the session's supervisor gives it up: the server then ends (and the host sees it end). */
  gaveUp?: Promise<string>;
}

export interface StdioTransportOptions {
  readonly input: Readable;
  readonly output: Writable;
  readonly maxMessageBytes: number;
  /** When aborted (SIGTERM): stop reading, let requests in flight finish for `stopDrainMs`, then end. */
  readonly stop?: AbortSignal;
  readonly stopDrainMs?: number;
}

/**
 * Serves one session over a pair of streams; resolves when the input ends or `stop` is aborted, and the
 * session has drained, answered what is left, closed, and its output is flushed — with `gave-up` when the
 * session was given up (the caller exits non-zero), else `ended`. Input is not read until the session is
 * open (the stream buffers it meanwhile).
 */
export async function serveStdio(options: StdioTransportOptions, openSession: (send: (line: string) => void) => LineSession | Promise<LineSession>): Promise<'ended' | 'gave-up'> {
  const framer = new LineFramer(options.maxMessageBytes);
  let outputOpen = true;
  options.output.on('error', () => {
    // The host went away (EPIPE): nothing more can be delivered, so stop writing.
    outputOpen = false;
  });
  // The lines sent in one turn (a drained mailbox answers up to dozens) leave in one write, at the end of
  // the turn: one system call instead of one per line, and no line waits past the current job.
  let pending: string[] = [];
  const writePending = (): void => {
    const lines = pending;
    pending = [];
    if (outputOpen) options.output.write(`${lines.join('\n')}\n`);
  };
  const send = (line: string) => {
    if (!outputOpen) return;
    pending.push(line);
    if (pending.length === 1) queueMicrotask(writePending);
  };
  const session = await openSession(send);
  return new Promise((resolve) => {
    let ending = false;
    let outcome: 'ended' | 'gave-up' = 'ended';
    let lastInput = Date.now();
    const end = async (drainMs: number, why: string): Promise<void> => {
      await session.drain?.(drainMs);
      session.answerInFlight?.(why);
      await session.close();
      if (outputOpen) await flush(options.output, OUTPUT_FLUSH_MS);
      resolve(outcome);
    };
    const onData = (chunk: Buffer): void => {
      lastInput = Date.now();
      for (const frame of framer.push(chunk)) session.receiveFrame(frame);
    };
    void session.gaveUp?.then(async () => {
      if (ending) return;
      outcome = 'gave-up';
      // The session answers what arrives now by itself; wait for the host's requests already on their way.
      const until = Date.now() + GIVE_UP_LINGER_MAX_MS;
      while (!ending && Date.now() < until && Date.now() - lastInput < GIVE_UP_QUIET_MS) await new Promise((r) => setTimeout(r, GIVE_UP_QUIET_MS / 4));
      if (ending) return;
      ending = true;
      options.input.off('data', onData);
      options.input.off('end', onEnd);
      void end(0, 'the session was given up');
    });
    const onEnd = (): void => {
      if (ending) return;
      ending = true;
      for (const frame of framer.end()) session.receiveFrame(frame);
      void end(EOF_DRAIN_MS, 'the host closed the input');
    };
    const onStop = (): void => {
      if (ending) return;
      ending = true;
      // Nothing more is read: a partial line is not a request yet, and later requests would not be finished.
      options.input.off('data', onData);
      options.input.off('end', onEnd);
      options.input.destroy();
      void end(options.stopDrainMs ?? EOF_DRAIN_MS, 'the server is shutting down');
    };
    options.input.on('data', onData);
    options.input.on('end', onEnd);
    if (options.stop?.aborted) onStop();
    else options.stop?.addEventListener('abort', onStop, { once: true });
  });
}

/** Resolves once what was written to `output` has been handed to the system, or after `ms`. */
function flush(output: Writable, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    output.write('', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
