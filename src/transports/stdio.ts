// The stdio transport: newline-delimited JSON on stdin/stdout. stdout carries protocol messages only;
// everything else goes to the logger (stderr). Streams are injected so tests need no process.

import type { Readable, Writable } from 'node:stream';
import { LineFramer } from './line-framer.ts';

/** When the host closes stdin, requests already sent get this long to be answered before the session closes. */
export const EOF_DRAIN_MS = 2000;

export interface LineSession {
  receiveFrame(frame: ReturnType<LineFramer['push']>[number]): void;
  /** Resolves when no request is in flight, or after `ms`. */
  drain?(ms: number): Promise<void>;
  close(): Promise<void>;
}

export interface StdioTransportOptions {
  readonly input: Readable;
  readonly output: Writable;
  readonly maxMessageBytes: number;
}

/**
 * Serves one session over a pair of streams; resolves when the input ends and the session has closed.
 * Input is not read until the session is open (the stream buffers it meanwhile).
 */
export async function serveStdio(options: StdioTransportOptions, openSession: (send: (line: string) => void) => LineSession | Promise<LineSession>): Promise<void> {
  const framer = new LineFramer(options.maxMessageBytes);
  let outputOpen = true;
  options.output.on('error', () => {
    // The host went away (EPIPE): nothing more can be delivered, so stop writing.
    outputOpen = false;
  });
  const send = (line: string) => {
    if (outputOpen) options.output.write(`${line}\n`);
  };
  const session = await openSession(send);
  return new Promise((resolve) => {
    options.input.on('data', (chunk: Buffer) => {
      for (const frame of framer.push(chunk)) session.receiveFrame(frame);
    });
    options.input.on('end', () => {
      for (const frame of framer.end()) session.receiveFrame(frame);
      void (session.drain ? session.drain(EOF_DRAIN_MS) : Promise.resolve()).then(() => session.close()).then(resolve);
    });
  });
}
