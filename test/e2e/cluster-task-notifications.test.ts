// Task status notifications across a cluster (Tasks extension): two super-pi nodes on one PostgreSQL
// store. A task submitted to node B runs there; a `subscriptions/listen` on node A names it and hears it
// working, then completed when B's run finishes (B's status write NOTIFYs every node; A reads the task
// from the store and tells its stream), and a second task, cancelled on B, is heard cancelled on A.
// Without PostgreSQL binaries the test is reported skipped, with the reason.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ScriptStep } from '../model/fixtures/scripted-server.ts';
import { findPostgres } from '../store/postgres-server.ts';
import { clusterGround } from './fixtures.ts';
import { withClusterNodes } from './two-nodes.ts';
import { httpAsk, httpListen, TOKENS } from './task-listen-wire.ts';

const NAME = 'a listen on node A hears the status of tasks node B runs: completed, and cancelled';
const answer = (text: string): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });

const found = findPostgres();
if (found.ok) {
  const ground = clusterGround(test, found);

  test(NAME, async () => {
    let release!: () => void;
    const script: ScriptStep[] = [{ ...answer('Done on B.'), release: new Promise<void>((r) => (release = r)) }, { hang: true }];
    await withClusterNodes(ground(), script, { SUPERPI_TOKENS: `${TOKENS.alice}=alice` }, async (a, b) => {
      const submit = async (prompt: string) => {
        const created = await httpAsk(b, 'tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt } });
        assert.is(created.result?.resultType, 'task', JSON.stringify(created));
        return String(created.result?.taskId);
      };

      const first = await submit('Finish when told.');
      const onA = await httpListen(a, { taskIds: [first] });
      assert.equal((await onA.next('the acknowledgment on A')).params?.notifications, { taskIds: [first] }, 'node A finds the task node B runs: it is in the shared store');
      assert.is((await onA.next('the working state on A')).params?.status, 'working');
      release();
      const done = await onA.next('the completion, heard on A');
      assert.equal([done.method, done.params?.taskId, done.params?.status], ['notifications/tasks', first, 'completed'], JSON.stringify(done));
      assert.is((done.params?.result as { content?: { text?: string }[] }).content?.[0]?.text, 'Done on B.');
      await onA.close();

      const second = await submit('Think slowly.');
      const again = await httpListen(a, { taskIds: [second] });
      await again.next('the acknowledgment on A');
      assert.is((await again.next('the working state on A')).params?.status, 'working');
      assert.is((await httpAsk(b, 'tasks/cancel', { taskId: second })).result?.resultType, 'complete');
      const cancelled = await again.next('the cancel on B, heard on A');
      assert.equal([cancelled.params?.taskId, cancelled.params?.status], [second, 'cancelled'], JSON.stringify(cancelled));
      await again.close();
    });
  });
} else {
  test.skip(NAME, () => undefined);
  process.stderr.write(`cluster task notification test skipped: ${found.reason}\n`);
}

test.run();
