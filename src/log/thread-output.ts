// A thread's console output goes to the operator's log through the bounded stderr sink (./stderr-sink.ts),
// never piped to process.stderr: a pipe bypasses the sink's bound and its non-blocking write, so a host that
// never reads our stderr held the thread's output in our memory (paused, it waits in the thread, unacknowledged)
// and a blocking stderr stopped the main thread at the pipe's next write. Both of a thread's streams go to
// stderr: stdout carries protocol messages only (stdio). The streams are always read, so the thread never
// waits on us; past the bound its output is dropped and counted, like log records.

import type { Readable } from 'node:stream';
import { THREAD_OUTPUT_PIECE_CHARS } from '../limits.ts';
import { type BoundedSink, stderrSink } from './stderr-sink.ts';

/** A Worker made with `stdout: true, stderr: true`: its console output as streams. */
export interface ThreadOutput {
  readonly stdout: Readable;
  readonly stderr: Readable;
}

/** Reads both of `thread`'s output streams into `sink` (the process's stderr sink by default), in pieces of at most THREAD_OUTPUT_PIECE_CHARS. */
export function forwardThreadOutput(thread: ThreadOutput, sink: BoundedSink = stderrSink()): void {
  for (const stream of [thread.stdout, thread.stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      for (const piece of pieces(chunk)) sink.write(piece);
    });
  }
}

/** `text` cut into pieces of at most THREAD_OUTPUT_PIECE_CHARS, never between the halves of a surrogate pair. */
export function pieces(text: string, size: number = THREAD_OUTPUT_PIECE_CHARS): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length;) {
    let end = Math.min(at + size, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && end - at > 1 && last >= 0xd800 && last <= 0xdbff) end--;
    out.push(text.slice(at, end));
    at = end;
  }
  return out;
}
