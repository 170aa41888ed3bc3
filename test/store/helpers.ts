// Shared by the store tests: temporary store directories, a settable clock, and the append child process.

import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as assert from 'uvu/assert';
import { StoreError, type StoreErrorCode } from '../../src/store/errors.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHILD = path.join(here, 'fixtures', 'append-child.ts');

export async function tempHome(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), 'superpi-store-'));
}

export async function removeHome(home: string): Promise<void> {
  await rm(home, { recursive: true, force: true });
}

/** Wall-clock stand-in that moves only when told to (`set` or `tick`). */
export class ManualClock {
  #now: number;
  constructor(start = 1_700_000_000_000) {
    this.#now = start;
  }
  readonly now = (): number => this.#now;
  tick(ms = 1): void {
    this.#now += ms;
  }
}

/** Runs `fn` and checks it throws a StoreError with this code; returns it for further checks. */
export function throwsStoreError(fn: () => unknown, code: StoreErrorCode): StoreError {
  try {
    fn();
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    assert.is(error.code, code, error.message);
    return error;
  }
  throw new Error(`expected a StoreError ${code}, nothing was thrown`);
}

export interface ChildRun {
  /** The seqs the child reported, in the order its appends returned. */
  readonly seqs: number[];
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

export interface ChildOptions {
  readonly ending: 'exit' | 'sigkill';
  /** Wait for `go()` before appending. */
  readonly waitForGo?: boolean;
  /** A pause between appends (default 0). */
  readonly pauseMs?: number;
  /** The parent kills the child with SIGKILL after it has reported this many appends. */
  readonly killAfter?: number;
}

export interface Child {
  readonly ready: Promise<void>;
  go(): void;
  readonly done: Promise<ChildRun>;
}

/** Starts fixtures/append-child.ts in its own process (node --import tsx), as a second server would run. */
export function startAppendChild(home: string, conversationId: string, count: number, tag: string, options: ChildOptions): Child {
  const args = [home, conversationId, String(count), tag, options.ending, String(options.pauseMs ?? 0)];
  return runAppendChild(CHILD, args, options);
}

/**
 * Runs an append child script (`node --import tsx SCRIPT ...args`) that prints `ready`, then one seq per
 * line as each append returns; with `killAfter`, the parent SIGKILLs it once it has reported that many.
 * Shared by the SQLite children here and the PostgreSQL ones of postgres-processes.test.ts.
 */
export function runAppendChild(script: string, scriptArgs: readonly string[], options: { readonly waitForGo?: boolean; readonly killAfter?: number }): Child {
  const args = ['--import', 'tsx', script, ...scriptArgs];
  if (options.waitForGo) args.push('--wait-for-go');
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const seqs: number[] = [];
  let stdout = '';
  let stderr = '';
  let markReady!: () => void;
  let failReady!: (error: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failReady = reject;
  });
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    stdout += chunk;
    let nl: number;
    while ((nl = stdout.indexOf('\n')) >= 0) {
      const line = stdout.slice(0, nl);
      stdout = stdout.slice(nl + 1);
      if (line === 'ready') markReady();
      else seqs.push(Number(line));
      if (options.killAfter !== undefined && seqs.length === options.killAfter) child.kill('SIGKILL');
    }
  });
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise<ChildRun>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      // Settles nothing when the child was ready: a promise resolves once.
      failReady(new Error(`the append child ended before it was ready (code ${code}, signal ${signal}): ${stderr}`));
      resolve({ seqs, code, signal, stderr });
    });
  });
  return { ready, go: () => child.stdin.write('go\n'), done };
}
