// The stdio transport: newline-delimited JSON on stdin/stdout. stdout carries protocol messages only;
// everything else goes to the logger (stderr). Streams are injected so tests need no process.

import type { Readable, Writable } from 'node:stream';
import { LineFramer } from './line-framer.ts';

export interface LineSession {
  receiveFrame(frame: ReturnType<LineFramer['push']>[number]): void;
  close(graceMs?: number): Promise<void>;
}

export interface StdioTransportOptions {
  readonly input: Readable;
  readonly output: Writable;
  readonly maxMessageBytes: number;
}

/** Serves one session over a pair of streams; resolves when the input ends and the session has closed. */
export function serveStdio(options: StdioTransportOptions, makeSession: (send: (line: string) => void) => LineSession): Promise<void> {
  const framer = new LineFramer(options.maxMessageBytes);
  let outputOpen = true;
  options.output.on('error', () => {
    // The host went away (EPIPE): nothing more can be delivered, so stop writing.
    outputOpen = false;
  });
  const send = (line: string) => {
    if (outputOpen) options.output.write(`${line}\n`);
  };
  const session = makeSession(send);
  return new Promise((resolve) => {
    options.input.on('data', (chunk: Buffer) => {
      for (const frame of framer.push(chunk)) session.receiveFrame(frame);
    });
    options.input.on('end', () => {
      for (const frame of framer.end()) session.receiveFrame(frame);
      void session.close().then(resolve);
    });
  });
}
