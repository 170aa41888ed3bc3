// Undo is write-ahead: the content a task's write replaces is durable in the store before the write, so a
// process killed anywhere in the write (before it, or after it and before the after-image) still undoes
// to the original, and a write re-run after a crash reverts to the true original, not to its own output.

import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Scheduler } from '../../src/actors/scheduler.ts';
import type { ActorRef } from '../../src/actors/actor-ref.ts';
import { createLogger } from '../../src/log/logger.ts';
import type { ModelProvider } from '../../src/model/types.ts';
import { schedulerEntry } from '../../src/server/thread-entries.ts';
import { SyncStoreAdapter } from '../../src/store/async-store.ts';
import { openStore } from '../../src/store/location.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { TaskRun } from '../../src/task/task-run.ts';
import { undoConversation } from '../../src/task/undo.ts';
import type { ToolExecutor } from '../../src/tools/contract.ts';
import { guarded } from '../hang-guard.ts';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'undo-child.ts');
const ORIGINAL = 'the original content\n';

let dir: string;
let workspace: string;
test.before.each(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'superpi-undo-'));
  workspace = path.join(dir, 'ws');
  await mkdir(workspace);
  await writeFile(path.join(workspace, 'a.txt'), ORIGINAL);
});
test.after.each(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the child until it prints `point`, SIGKILLs it there, and returns its conversation id. */
async function killChildAt(point: 'before-write' | 'after-write'): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, path.join(dir, 'home'), workspace, point], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let conversation = '';
  child.stderr.on('data', (d) => (err += d));
  const ended = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    out += chunk;
    conversation = /conversation (\S+)\n/.exec(out)?.[1] ?? conversation;
    if (out.includes(`${point}\n`)) child.kill('SIGKILL');
  });
  // A child starting tsx on a loaded 2-core machine can take tens of seconds: a hang guard, not a speed claim.
  const signal = await guarded(ended, `the task child reaching ${point}`, 60_000);
  assert.is(signal, 'SIGKILL', `killed at ${point}; stdout: ${out} stderr: ${err}`);
  assert.ok(conversation !== '', out);
  return conversation;
}

/** Undo as a later server process does it: from the store on disk. */
async function undoFromDisk(conversation: string) {
  const store = new SyncStoreAdapter(openStore({ home: path.join(dir, 'home') }));
  try {
    return await undoConversation(store, conversation, 'local', workspace);
  } finally {
    await store.close();
  }
}

test('killed after the before-image and before the write: the original is durable, the file untouched, undo has nothing to change', async () => {
  const conversation = await killChildAt('before-write');
  const store = openStore({ home: path.join(dir, 'home') });
  const images = (store.entries(conversation, 'local') ?? []).filter((e) => e.type === 'file_snapshot').map((e) => e.payload);
  store.close();
  assert.equal(images, [{ id: 'w1', path: 'a.txt', before: ORIGINAL, stage: 'before' }], 'the before-image was committed before the tool ran');
  const undo = await undoFromDisk(conversation);
  assert.not.ok(undo.isError, undo.text);
  assert.is(await readFile(path.join(workspace, 'a.txt'), 'utf8'), ORIGINAL);
});

test('killed after the write and before the after-image: undo restores the original and says the change was interrupted', async () => {
  const conversation = await killChildAt('after-write');
  assert.is(await readFile(path.join(workspace, 'a.txt'), 'utf8'), 'written by the task');
  const undo = await undoFromDisk(conversation);
  assert.not.ok(undo.isError, undo.text);
  assert.match(undo.text, /Reverted 1 change\(s\).*a\.txt/);
  assert.match(undo.text, /interrupted before their result was recorded/);
  assert.is(await readFile(path.join(workspace, 'a.txt'), 'utf8'), ORIGINAL);
  const again = await undoFromDisk(conversation);
  assert.match(again.text, /Nothing to undo/, 'the reverted change is consumed');
});

test('a write re-run after its actor crashed mid-write undoes to the true original, not to the content it wrote before the crash', async () => {
  const scheduler = new Scheduler({ threads: 1, log: () => undefined, entry: schedulerEntry('source') });
  scheduler.startThread(0);
  const store = new SyncStoreAdapter(SqliteConversationStore.open(':memory:'));
  try {
    const model: ModelProvider = {
      name: 'scripted',
      complete: async (req) => req.messages.some((m) => m.role === 'tool')
        ? { text: 'done', toolCalls: [], stopReason: 'end' }
        : { text: '', toolCalls: [{ id: 'w1', name: 'write', arguments: { path: 'a.txt', content: 'written by the task' } }], stopReason: 'tool_calls' },
    };
    let first: ActorRef | null = null;
    let writes = 0;
    const executeTool: ToolExecutor = async (_tool, args, _harness, ctx) => {
      await writeFile(path.join(workspace, String(args.path)), String(args.content));
      writes++;
      if (writes > 1) return { text: 'wrote a.txt' };
      // The worker dies after the write, before the call returns: the result never arrives.
      first?.kill();
      return new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted'))));
    };
    const { id } = await store.createConversation({ principal: 'local', sessionId: 'session-1', harness: 'super-pi-code' });
    const lease = await store.claimTask(id, {});
    await store.append(id, 'user', { text: 'change a.txt' }, lease.epoch);
    const run = new TaskRun({
      setup: { conversationId: id, harness: 'super-pi-code', maxTurns: 3, local: true, forbidWrites: false, canConfirm: false },
      principal: 'local', store, lease, scheduler, provider: model, workspace, executeTool, toolTimeoutMs: 10_000,
      logger: createLogger('error', { write: () => true }), onProgress: () => undefined, onAppend: () => undefined, confirm: async () => false,
    });
    first = await run.start();
    assert.is((await guarded(first.exited, 'the incarnation killed mid-write')).kind, 'killed');
    // What its supervisor does: another incarnation from the transcript, which re-runs the write.
    await run.start();
    assert.is((await guarded(run.outcome, 'the re-run task')).text, 'done');
    assert.is(writes, 2, 'the write (idempotent) was re-run');
    const undo = await undoConversation(store, id, 'local', workspace);
    assert.not.ok(undo.isError, undo.text);
    assert.is(await readFile(path.join(workspace, 'a.txt'), 'utf8'), ORIGINAL);
  } finally {
    await store.close();
    for (const t of scheduler.threads()) {
      t.stop();
      await t.exited;
    }
  }
});

test.run();
