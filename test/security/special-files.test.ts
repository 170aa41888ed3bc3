// Threat model rule: every file the server opens on a caller's behalf is a regular file, checked on the
// open descriptor before a byte is read, and opened without blocking — so a FIFO, a device or a symlink to
// /dev/zero can neither hang a thread nor cost memory, on every path (read, write, edit, undo snapshots,
// the workspace README). A regular file swapped for a FIFO between resolution and open is refused too.
// Caller classes: workspace content (a repository may contain FIFOs and links), any caller of the file
// tools (local, token), and anonymous callers who may read the workspace resource.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gatherWorkspaceContext } from '../../src/connection/workspace-context.ts';
import { currentContent } from '../../src/task/undo.ts';
import { readConfined } from '../../src/tools/confined-file.ts';
import { ToolError, type ToolContext } from '../../src/tools/contract.ts';
import { editTool } from '../../src/tools/edit.ts';
import { answerSync, type FsAnswer, type FsRequest, type FsSteps, runSync } from '../../src/tools/fs-steps.ts';
import { readSmallFileSync, readTool } from '../../src/tools/read.ts';
import { writeTool } from '../../src/tools/write.ts';

/** Longest any of these refusals may take before the test calls it a hang. */
const HANG_MS = 5000;

async function withWorkspace(body: (ws: string, ctx: ToolContext) => Promise<void>): Promise<void> {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'super-pi-special-')));
  try {
    await body(root, { workspace: root, signal: new AbortController().signal });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

function mkfifo(file: string): void {
  execFileSync('mkfifo', [file]);
}

/** Settles `work` or fails the test after HANG_MS: a refusal must come at once, not after a blocked open. */
async function settlesQuickly<T>(what: string, work: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} hung for ${HANG_MS} ms`)), HANG_MS);
  });
  try {
    return await Promise.race([work.then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error })), hang]);
  } finally {
    clearTimeout(timer);
  }
}

async function assertRefused(what: string, work: Promise<unknown>, pattern: RegExp): Promise<void> {
  const r = await settlesQuickly(what, work);
  assert.not.ok(r.ok, `${what} succeeded`);
  if (!r.ok) {
    assert.instance(r.error, ToolError, `${what}: ${String(r.error)}`);
    assert.match((r.error as Error).message, pattern, what);
  }
}

test('read, write and edit refuse a FIFO at once, with a clear message', () => withWorkspace(async (ws, ctx) => {
  mkfifo(path.join(ws, 'pipe'));
  await assertRefused('read', readTool({ path: 'pipe' }, ctx), /not a regular file/);
  await assertRefused('write', writeTool({ path: 'pipe', content: 'x' }, ctx), /not a regular file/);
  await assertRefused('edit', editTool({ path: 'pipe', oldText: 'a', newText: 'b' }, ctx), /not a regular file/);
  // The inline (synchronous) read of a connection actor takes the same path.
  assert.throws(() => readSmallFileSync({ path: 'pipe' }, ws, 1024), /not a regular file/);
}));

test('an undo snapshot of a FIFO is refused, not waited on', () => withWorkspace(async (ws) => {
  mkfifo(path.join(ws, 'pipe'));
  await assertRefused('snapshot', currentContent(ws, 'pipe'), /not a regular file/);
}));

test('a README that is a FIFO, or a link to /dev/zero, gives no excerpt and does not hang', () => withWorkspace(async (ws) => {
  mkfifo(path.join(ws, 'README.md'));
  const fifo = await settlesQuickly('workspace context with a FIFO README', gatherWorkspaceContext(ws));
  assert.ok(fifo.ok && fifo.value.readme === null);
  await rm(path.join(ws, 'README.md'));
  await symlink('/dev/zero', path.join(ws, 'README.md'));
  const zero = await settlesQuickly('workspace context with a /dev/zero README', gatherWorkspaceContext(ws));
  assert.ok(zero.ok && zero.value.readme === null);
}));

test('a symlink to /dev/zero is refused by read, edit and snapshots (it leads outside)', () => withWorkspace(async (ws, ctx) => {
  await symlink('/dev/zero', path.join(ws, 'zero'));
  await assertRefused('read', readTool({ path: 'zero' }, ctx), /outside the workspace/);
  await assertRefused('edit', editTool({ path: 'zero', oldText: 'a', newText: 'b' }, ctx), /outside the workspace/);
  await assertRefused('snapshot', currentContent(ws, 'zero'), /outside the workspace/);
}));

test('a device node inside the workspace is not read', () => withWorkspace(async (ws, ctx) => {
  try {
    execFileSync('mknod', [path.join(ws, 'zero'), 'c', '1', '5'], { stdio: 'ignore' });
  } catch (err) {
    // Not root, or a file system without devices: nothing to test on this machine.
    console.log(`  (skipped: mknod is not permitted here: ${(err as Error).message})`);
    return;
  }
  await assertRefused('read', readTool({ path: 'zero' }, ctx), /not a regular file/);
  await assertRefused('edit', editTool({ path: 'zero', oldText: 'a', newText: 'b' }, ctx), /not a regular file/);
  await assertRefused('snapshot', currentContent(ws, 'zero'), /not a regular file/);
  await assertRefused('write', writeTool({ path: 'zero', content: 'x' }, ctx), /not a regular file/);
}));

/** Runs the steps with synchronous calls, calling `beforeOpen` just before the file is opened (after resolution). */
function runSwapping<T>(steps: FsSteps<T>, beforeOpen: (file: string) => void): T {
  return runSync(steps, (req: FsRequest): FsAnswer => {
    if (req.op === 'open') beforeOpen(req.path);
    return answerSync(req);
  });
}

test('a regular file swapped for a FIFO after it was resolved is refused on its descriptor, without blocking', () => withWorkspace(async (ws) => {
  const file = path.join(ws, 'a.txt');
  await writeFile(file, 'text\n');
  let swapped = false;
  assert.throws(() => runSwapping(readConfined(ws, 'a.txt', 1024), (opened) => {
    if (opened !== file) return;
    rmSync(file);
    mkfifo(file);
    swapped = true;
  }), /not a regular file/);
  assert.ok(swapped, 'the swap happened between resolution and open');
}));

test.run();
