// Runs inside a thread whose console its creator could not pipe to itself (piscina makes its threads without
// `stdout: true, stderr: true`): the thread captures its own console and sends it to the main thread, which
// hands it to the bounded log (./thread-output.ts, `forwardPortOutput`). Apart from thread-output.ts because
// it needs worker_threads' `parentPort`, which the command bundle (which loads worker_threads lazily) cannot offer.

import { MessageChannel, parentPort } from 'node:worker_threads';
import { LOG_QUEUE_MAX_BYTES } from '../limits.ts';
import { DROPPED, pieces, SENT, TAKEN, THREAD_OUTPUT_PORT, type ThreadOutputHandshake, type ThreadOutputPiece } from './thread-output.ts';

/**
 * In a thread: its stdout and stderr (console.log, console.error, process warnings) go to the main thread over a
 * port of their own, posted on the parent port once (`THREAD_OUTPUT_PORT`). At most `maxChars` characters are
 * on their way at once; a piece past it is dropped and counted, and the main thread says how many once it has
 * caught up. Nothing is written to the thread's own streams, which Node pipes to the process's stdout and
 * stderr past every bound. Does nothing on the main thread.
 */
export function captureThreadOutput(maxChars: number = LOG_QUEUE_MAX_BYTES): void {
  if (parentPort === null) return;
  const { port1, port2 } = new MessageChannel();
  const shared = new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT);
  parentPort.postMessage({ [THREAD_OUTPUT_PORT]: port2, counters: shared } satisfies ThreadOutputHandshake, [port2]);
  const counters = new Int32Array(shared);
  const send = (text: string): void => {
    for (const piece of pieces(text)) {
      // Wrapping Int32 counters: their difference is what is on the way.
      const onTheWay = (Atomics.load(counters, SENT) - Atomics.load(counters, TAKEN)) | 0;
      if (onTheWay > 0 && onTheWay + piece.length > maxChars) {
        Atomics.add(counters, DROPPED, 1);
        // The main thread counts drops when it has taken all that was sent; if it took the last piece between
        // the look above and this count, an empty piece makes it look again, so no drop goes unsaid.
        if (Atomics.load(counters, SENT) === Atomics.load(counters, TAKEN)) port1.postMessage({ text: '' } satisfies ThreadOutputPiece);
        continue;
      }
      Atomics.add(counters, SENT, piece.length);
      port1.postMessage({ text: piece } satisfies ThreadOutputPiece);
    }
  };
  port1.unref();
  const write = (chunk: string | Uint8Array, encodingOrDone?: BufferEncoding | ((err?: Error | null) => void), done?: (err?: Error | null) => void): boolean => {
    send(typeof chunk === 'string' ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8'));
    const callback = typeof encodingOrDone === 'function' ? encodingOrDone : done;
    if (callback) process.nextTick(callback, null);
    return true;
  };
  process.stdout.write = write as typeof process.stdout.write;
  process.stderr.write = write as typeof process.stderr.write;
}
