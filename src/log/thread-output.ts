// A thread's console output goes to the operator's log through the bounded stderr sink (./stderr-sink.ts),
// never piped to process.stderr: a pipe bypasses the sink's bound and its non-blocking write, so a host that
// never reads our stderr held the thread's output in our memory (paused, it waits in the thread, unacknowledged)
// and a blocking stderr stopped the main thread at the pipe's next write. Both of a thread's streams go to
// stderr: stdout carries protocol messages only (stdio). The streams are always read, so the thread never
// waits on us; past the bound its output is dropped and counted, like log records.
// Two ways in. A thread we make ourselves gets `stdout: true, stderr: true` and its streams are read here
// (`forwardThreadOutput`). A thread made by a library that offers no such option (piscina's tool pool)
// captures its own console (`captureThreadOutput`, run in the thread: ./thread-console.ts): its writes go to the main thread over
// a port of its own, at most LOG_QUEUE_MAX_BYTES characters not yet taken there, and the main thread hands
// them to the sink (`forwardPortOutput`). Before, a tool thread's writes were piped to process.stderr by
// Node: a host not reading stderr had all of them held by the main thread (256 MB written, 256 MB held),
// or the main thread blocked on a blocking stderr, and the call never answered (piscina waits for the flush).

import type { Readable } from 'node:stream';
import type { MessagePort } from 'node:worker_threads';
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

/** The key of the one message a capturing thread posts on its parent port: the port its output comes over. */
export const THREAD_OUTPUT_PORT = 'superpiThreadOutput';

/** Slots of the counters a capturing thread shares with the main thread (Int32, wrapping: only differences are read). */
export const SENT = 0;
export const TAKEN = 1;
export const DROPPED = 2;

/** The one message a capturing thread posts on its parent port. */
export interface ThreadOutputHandshake {
  readonly [THREAD_OUTPUT_PORT]: MessagePort;
  /** Characters sent, characters taken by the main thread, pieces dropped: read and written with Atomics. */
  readonly counters: SharedArrayBuffer;
}

/** Over a capturing thread's port, thread to main thread: a piece of its output. */
export interface ThreadOutputPiece {
  readonly text: string;
}

/** Is this message from a thread the handshake of its output port (`captureThreadOutput`)? */
export function threadOutputHandshake(message: unknown): ThreadOutputHandshake | null {
  if (typeof message !== 'object' || message === null) return null;
  const { [THREAD_OUTPUT_PORT]: port, counters } = message as Record<string, unknown>;
  // Known by its shape: the command bundle loads worker_threads lazily, through wrappers no port is an instance of.
  const isPort = typeof port === 'object' && port !== null && typeof (port as MessagePort).postMessage === 'function' && typeof (port as MessagePort).on === 'function';
  return isPort && counters instanceof SharedArrayBuffer ? { [THREAD_OUTPUT_PORT]: port as MessagePort, counters } : null;
}

/**
 * Main thread: hands what a capturing thread writes to `sink` (the process's stderr sink by default), in
 * pieces of at most THREAD_OUTPUT_PIECE_CHARS, and counts it taken at once (the thread reads the count
 * without waiting for its own event loop, which a pooled thread blocks between tasks). Once everything sent
 * has been taken, the pieces the thread dropped meanwhile are counted with the sink's drops, or said in one line.
 */
export function forwardPortOutput(handshake: ThreadOutputHandshake, sink: BoundedSink = stderrSink(), clock: () => Date = () => new Date()): void {
  const port = handshake[THREAD_OUTPUT_PORT];
  const counters = new Int32Array(handshake.counters);
  port.on('message', (message: ThreadOutputPiece) => {
    if (typeof message?.text !== 'string') return;
    for (const piece of pieces(message.text)) sink.write(piece);
    Atomics.add(counters, TAKEN, message.text.length);
    if (Atomics.load(counters, SENT) !== Atomics.load(counters, TAKEN)) return;
    const n = Atomics.exchange(counters, DROPPED, 0);
    if (n > 0) {
      sink.lost(n, `${clock().toISOString()} super-pi warning: ${n} piece${n === 1 ? '' : 's'} of a thread's console output ${n === 1 ? 'was' : 'were'} dropped: the thread wrote faster than the main thread took it, with LOG_QUEUE_MAX_BYTES characters of it on the way {"dropped":${n}}\n`);
    }
  });
  // The port must not keep the process alive; the thread's exit closes it.
  port.unref();
}
