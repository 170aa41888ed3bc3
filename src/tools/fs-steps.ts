// File-system work written once, as a generator of requests, and run either asynchronously (the main
// thread, the tool pool) or synchronously (a connection actor reading a small file on its own scheduler
// thread, src/connection/inline-effects.ts): the same checks in the same order both ways, so confinement
// and the tools' behaviour cannot drift apart between the two.

import { closeSync, fstatSync, lstatSync, openSync, readlinkSync, readSync, type Stats, statSync } from 'node:fs';
import { type FileHandle, lstat, open, readlink, stat } from 'node:fs/promises';

/** An open file: a descriptor when run synchronously, a FileHandle when run asynchronously. Opaque to the steps. */
export type OpenFile = number | FileHandle;

export type FsRequest =
  | { readonly op: 'lstat' | 'stat' | 'readlink'; readonly path: string }
  | { readonly op: 'open'; readonly path: string; readonly flags: number }
  /** The type, size and identity of an open file: what the descriptor is, whatever its name now names. */
  | { readonly op: 'fstat'; readonly file: OpenFile }
  /** Reads up to `buffer.length` bytes at the current position; answers with the count read (0 at the end). */
  | { readonly op: 'read'; readonly file: OpenFile; readonly buffer: Buffer }
  | { readonly op: 'close'; readonly file: OpenFile };

export type FsAnswer = Stats | string | number | OpenFile | undefined;

/** Steps that ask the file system questions and end with a T. A failed request is thrown into them. */
export type FsSteps<T> = Generator<FsRequest, T, FsAnswer>;

export function* lstatStep(path: string): FsSteps<Stats> {
  return asStats(yield { op: 'lstat', path });
}

export function* statStep(path: string): FsSteps<Stats> {
  return asStats(yield { op: 'stat', path });
}

export function* readlinkStep(path: string): FsSteps<string> {
  const target = yield { op: 'readlink', path };
  if (typeof target !== 'string') throw new TypeError(`readlink answered ${typeof target}`);
  return target;
}

export function* openStep(path: string, flags: number): FsSteps<OpenFile> {
  const file = yield { op: 'open', path, flags };
  if (typeof file !== 'number' && !isFileHandle(file)) throw new TypeError(`open answered ${typeof file}`);
  return file;
}

export function* fstatStep(file: OpenFile): FsSteps<Stats> {
  return asStats(yield { op: 'fstat', file });
}

export function* readStep(file: OpenFile, buffer: Buffer): FsSteps<number> {
  const bytesRead = yield { op: 'read', file, buffer };
  if (typeof bytesRead !== 'number') throw new TypeError(`read answered ${typeof bytesRead}`);
  return bytesRead;
}

export function* closeStep(file: OpenFile): FsSteps<void> {
  yield { op: 'close', file };
}

/**
 * Runs the steps with synchronous system calls: for work that finishes in microseconds. `answer`: what
 * answers each request (a test's driver that counts or interferes, around `answerSync`).
 */
export function runSync<T>(steps: FsSteps<T>, answer: (req: FsRequest) => FsAnswer = answerSync): T {
  let next = steps.next();
  while (!next.done) {
    let value: FsAnswer;
    try {
      value = answer(next.value);
    } catch (err) {
      next = steps.throw(err);
      continue;
    }
    next = steps.next(value);
  }
  return next.value;
}

/** Runs the steps with the promise API (libuv's thread pool): the event loop stays free meanwhile. */
export async function runAsync<T>(steps: FsSteps<T>): Promise<T> {
  let next = steps.next();
  while (!next.done) {
    let answer: FsAnswer;
    try {
      answer = await answerAsync(next.value);
    } catch (err) {
      next = steps.throw(err);
      continue;
    }
    next = steps.next(answer);
  }
  return next.value;
}

/** One request answered with the synchronous system call it names. */
export function answerSync(req: FsRequest): FsAnswer {
  switch (req.op) {
    case 'lstat': return lstatSync(req.path);
    case 'stat': return statSync(req.path);
    case 'readlink': return readlinkSync(req.path);
    case 'open': return openSync(req.path, req.flags);
    case 'fstat': return fstatSync(fdOf(req.file));
    case 'read': return readSync(fdOf(req.file), req.buffer, 0, req.buffer.length, null);
    case 'close':
      closeSync(fdOf(req.file));
      return undefined;
  }
}

async function answerAsync(req: FsRequest): Promise<FsAnswer> {
  switch (req.op) {
    case 'lstat': return lstat(req.path);
    case 'stat': return stat(req.path);
    case 'readlink': return readlink(req.path);
    case 'open': return open(req.path, req.flags);
    case 'fstat': return handleOf(req.file).stat();
    case 'read': return (await handleOf(req.file).read(req.buffer, 0, req.buffer.length, null)).bytesRead;
    case 'close':
      await handleOf(req.file).close();
      return undefined;
  }
}

function asStats(answer: FsAnswer): Stats {
  if (typeof answer !== 'object' || answer === null || !('isFile' in answer)) throw new TypeError('a stat request answered something else');
  return answer;
}

function isFileHandle(value: FsAnswer): value is FileHandle {
  return typeof value === 'object' && value !== null && 'fd' in value && 'read' in value;
}

/** The descriptor number behind an open file, whichever driver opened it (for /proc/self/fd/N). */
export function descriptorOf(file: OpenFile): number {
  return typeof file === 'number' ? file : file.fd;
}

function fdOf(file: OpenFile): number {
  if (typeof file !== 'number') throw new TypeError('a FileHandle reached the synchronous driver');
  return file;
}

function handleOf(file: OpenFile): FileHandle {
  if (typeof file === 'number') throw new TypeError('a file descriptor reached the asynchronous driver');
  return file;
}
