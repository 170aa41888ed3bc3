// Fault injection for harness tasks: the real stdio server with `--chaos kill-task-worker=<ms>`, which
// terminates the scheduler worker hosting the running task actor again and again. The task must still
// complete and answer its harness_task call, and its transcript must hold every step exactly once: one
// prompt, one model entry per turn, one tool_call per call and one result (or interrupted mark) per
// call, one final answer.

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startHistoryModel } from '../model/fixtures/history-model.ts';
import { connectStdio, makeSandbox, type Sandbox, textOf } from './fixtures.ts';

const TURNS = [
  { calls: [{ name: 'read', arguments: { path: 'src/greet.ts' } }] },
  { calls: [{ name: 'bash', arguments: { command: 'echo ran >> ran.log; sleep 0.3' } }, { name: 'ls', arguments: { path: '.' } }] },
  { calls: [{ name: 'write', arguments: { path: 'notes.txt', content: 'remember the greeting\n' } }] },
  { calls: [{ name: 'grep', arguments: { pattern: 'hello' } }] },
  { calls: [{ name: 'find', arguments: { pattern: '*.ts' } }, { name: 'read', arguments: { path: 'notes.txt' } }] },
  { calls: [{ name: 'ls', arguments: { path: 'src' } }] },
  { calls: [{ name: 'read', arguments: { path: 'src/greet.ts' } }] },
  { text: 'All done.' },
];
// Slow enough that the task lives through several kills; kills (every 1.2 s) slow enough to stay within the task's restart intensity (10 in 10 s) however slow the machine.
const MODEL_DELAY_MS = 600;

interface Line {
  seq: number;
  type: string;
  payload: { text?: string; id?: string; toolCalls?: { id: string; name: string }[] };
}

const chaos = suite('harness_task under fault injection');
let box: Sandbox;
let home: string;

chaos.before(async () => {
  box = await makeSandbox();
  home = await mkdtemp(path.join(os.tmpdir(), 'superpi-home-'));
});
chaos.after(async () => {
  await box.cleanup();
  await rm(home, { recursive: true, force: true });
});

chaos('the task worker is killed several times: the task completes, and its transcript has every step exactly once', async () => {
  const model = await startHistoryModel(TURNS, MODEL_DELAY_MS);
  const c = await connectStdio(box.ws, ['--chaos', 'kill-task-worker=1200'], {}, (x) => x, { SUPERPI_MODEL_URL: model.baseUrl, SUPERPI_MODEL: 'scripted', SUPERPI_HOME: home });
  try {
    const r = await c.client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'Look around and take notes.' } }, undefined, { timeout: 120_000 });
    assert.not.ok(r.isError, textOf(r));
    assert.is(textOf(r), 'All done.');
    const s = r.structuredContent as { conversation_id: string; status: string; turns: number; tool_calls: number };
    assert.is(s.status, 'completed');
    assert.is(s.turns, TURNS.length);
    assert.is(s.tool_calls, TURNS.reduce((n, t) => n + (t.calls?.length ?? 0), 0));

    const stderr = c.stderr();
    const kills = stderr.split('chaos: killing the scheduler worker of a task').length - 1;
    const resumed = stderr.split('task actor restarted; continuing from the last durable entry').length - 1;
    assert.ok(kills >= 3, `the task's worker was killed ${kills} times`);
    assert.ok(resumed >= 3, `the task actor was resumed ${resumed} times (${kills} kills)`);

    const read = await c.client.readResource({ uri: `superpi://conversation/${s.conversation_id}/transcript` });
    const jsonl = (read.contents[0] as { text: string }).text;
    const lines = jsonl.split('\n').map((l) => JSON.parse(l) as Line);
    for (let i = 1; i < lines.length; i++) assert.ok((lines[i] as Line).seq > (lines[i - 1] as Line).seq, 'seq strictly increases');
    const count = (type: string) => lines.filter((l) => l.type === type).length;
    assert.is(count('user'), 1);
    assert.is(count('final'), 1);
    assert.is(count('error'), 0);
    const models = lines.filter((l) => l.type === 'model');
    assert.is(models.length, TURNS.length, 'one model entry per turn');
    // Each turn's calls: one tool_call and exactly one result or interrupted mark, between this model entry and the next.
    for (let t = 0; t < models.length; t++) {
      const from = lines.indexOf(models[t] as Line);
      const to = t + 1 < models.length ? lines.indexOf(models[t + 1] as Line) : lines.length;
      const span = lines.slice(from + 1, to);
      const calls = (models[t] as Line).payload.toolCalls ?? [];
      assert.equal(calls.map((x) => x.name), (TURNS[t]?.calls ?? []).map((x) => x.name), `turn ${t + 1} is the script's turn, not a repeat`);
      for (const call of calls) {
        assert.is(span.filter((l) => l.type === 'tool_call' && l.payload.id === call.id).length, 1, `${call.id} started once`);
        const ends = span.filter((l) => (l.type === 'tool_result' || l.type === 'tool_interrupted') && l.payload.id === call.id);
        assert.is(ends.length, 1, `${call.id} has one outcome`);
        if (ends[0]?.type === 'tool_interrupted') assert.is(call.name, 'bash', 'only the non-idempotent call may be interrupted');
      }
    }
    // bash is not idempotent: never run twice, whatever the kills.
    const ran = await readFile(path.join(box.ws, 'ran.log'), 'utf8').catch(() => '');
    assert.ok(ran.split('\n').filter(Boolean).length <= 1, `bash ran ${ran.split('\n').filter(Boolean).length} times`);
    // write is idempotent: re-run if it was interrupted; the file is there either way.
    assert.is(await readFile(path.join(box.ws, 'notes.txt'), 'utf8'), 'remember the greeting\n');
    // The session itself still works.
    assert.ok(await c.client.ping());
  } finally {
    await c.close();
    await model.close();
  }
});

chaos.run();
