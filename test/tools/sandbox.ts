import { readFileSync } from 'node:fs';
// What the tool tests share: throw-away workspaces under the OS temp directory, the ToolContext a tool
// body is called with, and the check that a call fails with a ToolError (the kind the model gets to read).
// Not a *.test.ts file, so the runner only loads it through the tests that import it.

import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import { ToolError, type ToolContext } from '../../src/tools/contract.ts';

/** Files to create: path relative to the workspace → content. Parent directories are made as needed. */
type Files = Record<string, string | Buffer>;

export interface Sandbox {
  /** The temp directory that holds the workspace and `outside`. */
  readonly root: string;
  /** The workspace, `root`/ws, realpath-resolved as the server's own workspace is. */
  readonly ws: string;
  /** An empty directory beside the workspace, `root`/outside: somewhere for escaping paths and links to lead. */
  readonly outside: string;
  /** A context for `ws` whose signal is never aborted. */
  readonly ctx: ToolContext;
}

export function context(ws: string, extra: Partial<ToolContext> = {}): ToolContext {
  return { workspace: ws, signal: new AbortController().signal, ...extra };
}

/** A new sandbox holding `files`; removeSandbox deletes it. */
async function makeSandbox(files: Files = {}): Promise<Sandbox> {
  // realpath: the tools compare real paths, and the temp directory may be reached through a link (macOS /tmp).
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'super-pi-test-')));
  const ws = path.join(root, 'ws');
  const outside = path.join(root, 'outside');
  await mkdir(ws);
  await mkdir(outside);
  await writeFiles(ws, files);
  return { root, ws, outside, ctx: context(ws) };
}

async function removeSandbox(box: Sandbox): Promise<void> {
  await rm(box.root, { recursive: true, force: true });
}

async function writeFiles(dir: string, files: Files): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), content);
  }
}

/** Runs `body` in a new sandbox holding `files`, and removes the sandbox afterwards, whatever happens. */
export async function inSandbox(files: Files, body: (box: Sandbox) => Promise<void>): Promise<void> {
  const box = await makeSandbox(files);
  try {
    await body(box);
  } finally {
    await removeSandbox(box);
  }
}

/**
 * Gives every test of `suite` a new, empty sandbox, removed after the test. The returned object's fields
 * change from test to test, so read them inside a test, not when the file loads.
 */
export function sandboxPerTest(suite: Test): Sandbox {
  let current: Sandbox | null = null;
  const now = (): Sandbox => {
    if (current === null) throw new Error('the sandbox exists only while a test runs');
    return current;
  };
  suite.before.each(async () => {
    current = await makeSandbox();
  });
  suite.after.each(async () => {
    if (current !== null) await removeSandbox(current);
    current = null;
  });
  return {
    get root() { return now().root; },
    get ws() { return now().ws; },
    get outside() { return now().outside; },
    get ctx() { return now().ctx; },
  };
}

/** Awaits a call that must fail, and returns what it threw, whatever that is. */
export async function rejection(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** Awaits a call that must fail with a ToolError, and returns that error for the test to check its message. */
export async function failure(call: Promise<unknown>): Promise<ToolError> {
  const err = await rejection(call);
  assert.instance(err, ToolError);
  return err as ToolError;
}

/** Running means it exists and is not a zombie (the container's init may be slow to reap, or never). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const state = stat.slice(stat.lastIndexOf(')') + 2).charAt(0);
  return state !== 'Z' && state !== 'X';
}
