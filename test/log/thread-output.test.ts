// A thread's console output reaches the log through the bounded stderr sink, never piped to
// process.stderr past it: a thread that writes far more than the bound to its stdout and stderr, into a
// stream that never drains, leaves at most the bound queued (the rest dropped and counted), and is never
// kept waiting on us (every write of the thread completes). For the function itself on a plain Worker, and
// through the two places that start threads with console streams: a scheduler thread and a git status thread.

import { EventEmitter } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PassThrough } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_THREAD_LIMITS, SchedulerThread } from '../../src/actors/scheduler-thread.ts';
import type { ThreadEntry } from '../../src/actors/thread-entry.ts';
import { BoundedSink, type QueuedStream } from '../../src/log/stderr-sink.ts';
import { forwardThreadOutput, pieces } from '../../src/log/thread-output.ts';
import { gitStatusInThread } from '../../src/tools/git-status-thread.ts';
import { guarded } from '../hang-guard.ts';

const BOUND = 64 * 1024;
/** What each thread writes: 4 MiB to each stream, sixty-four times the bound. */
const WRITES = 64;
const WRITE_CHARS = 64 * 1024;

/** A stream whose reader never reads: its queue only grows. */
class NeverDrains extends EventEmitter implements QueuedStream {
  writableLength = 0;
  readonly writableHighWaterMark = 16 * 1024;
  writes = 0;
  write(text: string): boolean {
    this.writes++;
    this.writableLength += text.length;
    return false;
  }
}

/** The thread's body: WRITES writes to each stream, each awaited (it completes only once we took it), then `done()`. */
const NOISE = `
  const write = (s, text) => new Promise((r) => s.write(text, r));
  const line = 'x'.repeat(${WRITE_CHARS - 1}) + '\\n';
  for (let i = 0; i < ${WRITES}; i++) { await write(process.stdout, line); await write(process.stderr, line); }
`;

const t = suite('thread output through the bounded sink');
let dir = '';
t.before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'thread-output-'));
});
t.after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function entryOf(name: string, done: string): Promise<ThreadEntry> {
  const file = path.join(dir, `${name}.mjs`);
  await writeFile(file, `import { parentPort } from 'node:worker_threads';\n${NOISE}\n${done}\n`);
  return { url: pathToFileURL(file), execArgv: [], mode: 'built' };
}

function assertBounded(stream: NeverDrains, sink: BoundedSink): void {
  assert.ok(stream.writes > 0, 'the thread\'s output reached the sink');
  assert.ok(stream.writableLength <= BOUND, `queued ${stream.writableLength} characters, past the bound ${BOUND}`);
  assert.ok(sink.dropped > 0, 'what did not fit was dropped and counted');
}

t('pieces: at most the size each, the whole text in order, a surrogate pair never cut', () => {
  assert.equal(pieces('abcdefg', 3), ['abc', 'def', 'g']);
  assert.equal(pieces('', 3), []);
  assert.equal(pieces('ab\u{1F600}c', 3), ['ab', '\u{1F600}c']);
});

t('one write far larger than the bound is cut into pieces: the first fits the empty queue, the rest are dropped', () => {
  const stream = new NeverDrains();
  const sink = new BoundedSink(stream, BOUND);
  const thread = { stdout: new PassThrough(), stderr: new PassThrough() };
  forwardThreadOutput(thread, sink);
  thread.stderr.write('y'.repeat(16 * BOUND));
  assert.is(stream.writableLength, BOUND);
  assert.is(sink.dropped, 15);
});

t('a Worker writing 8 MiB into a stderr that is never read: at most the bound queued, and every write of the thread completes', async () => {
  const stream = new NeverDrains();
  const sink = new BoundedSink(stream, BOUND);
  const worker = new Worker(`(async () => { const { parentPort } = require('node:worker_threads');\n${NOISE}\nparentPort.postMessage('flushed'); })()`, { eval: true, stdout: true, stderr: true });
  forwardThreadOutput(worker, sink);
  const said = await guarded(new Promise((resolve) => worker.once('message', resolve)), 'the thread finishing its writes');
  assert.is(said, 'flushed');
  await worker.terminate();
  assertBounded(stream, sink);
});

t('a scheduler thread\'s stdout and stderr go to the bounded sink', async () => {
  const stream = new NeverDrains();
  const sink = new BoundedSink(stream, BOUND);
  const thread = new SchedulerThread(0, await entryOf('scheduler-noise', 'process.exit(0);'), DEFAULT_THREAD_LIMITS, () => {}, { output: sink });
  await guarded(thread.exited, 'the noisy scheduler thread exiting');
  assertBounded(stream, sink);
});

t('a git status thread\'s stdout and stderr go to the bounded sink', async () => {
  const stream = new NeverDrains();
  const sink = new BoundedSink(stream, BOUND);
  const outcome = await gitStatusInThread(dir, path.join(dir, '.git'), { entry: await entryOf('git-noise', "parentPort.postMessage({ t: 'status', status: 'done' });"), output: sink, deadlineMs: 30_000 });
  assert.equal(outcome, { status: 'done' });
  assertBounded(stream, sink);
});

t.run();
