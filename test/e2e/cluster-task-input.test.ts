// A Tasks-extension task that asks its person, across a cluster (issue 24 item 4): two super-pi nodes on one
// PostgreSQL store. Node A runs the task until bash's question parks it `input_required`; node B, which never
// ran it, shows the same question from the store, takes the `tasks/update`, and runs the rest of the task:
// the command runs once, the task completes, both nodes read the result. Without PostgreSQL binaries the
// test is reported skipped, with the reason.

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ScriptStep } from '../model/fixtures/scripted-server.ts';
import { findPostgres } from '../store/postgres-server.ts';
import { pollUntil } from '../hang-guard.ts';
import { clusterGround, type RunningServer } from './fixtures.ts';
import { withClusterNodes } from './two-nodes.ts';
import { httpAsk, type Message, TASKS, TOKENS } from './task-listen-wire.ts';

const NAME = 'a task parked input_required on node A is shown and answered on node B, which runs the rest of it';

const bashTurn = (command: string): ScriptStep => ({
  body: { choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call-bash-0', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } }] } }] },
});
const said = (text: string): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });

const ASKABLE = { elicitation: { form: {} }, extensions: { [TASKS]: {} } };
/** A request of a caller who can be asked (form elicitation and the extension declared). */
const post = (node: RunningServer, method: string, params: Record<string, unknown>): Promise<Message> => httpAsk(node, method, params, 'alice', ASKABLE);

const found = findPostgres();
if (found.ok) {
  const ground = clusterGround(test, found);

  test(NAME, async () => {
    await withClusterNodes(ground(), [bashTurn('echo cluster >> cluster.txt'), said('Done on the cluster.')], { SUPERPI_TOKENS: `${TOKENS.alice}=alice` }, async (a, b, box) => {
      const created = await post(a, 'tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'append on the cluster' } });
      assert.is(created.result?.resultType, 'task', JSON.stringify(created));
      const taskId = String(created.result?.taskId);
      const waiting = await pollUntil('the task to park on node A', async () => {
        const got = await post(b, 'tasks/get', { taskId });
        return got.result?.status === 'working' ? null : got;
      }, 20_000);
      assert.is(waiting.result?.status, 'input_required', JSON.stringify(waiting));
      const requests = waiting.result?.inputRequests as Record<string, { method: string; params: { message: string } }>;
      const [key] = Object.keys(requests);
      assert.match(requests[key!]!.params.message, /run the command: echo cluster >> cluster\.txt/);
      assert.equal((await post(a, 'tasks/get', { taskId })).result?.inputRequests, requests, 'the node that parked it reads the same');

      const ack = await post(b, 'tasks/update', { taskId, inputResponses: { [key!]: { action: 'accept', content: { allow: true } } } });
      assert.is(ack.result?.resultType, 'complete', JSON.stringify(ack));
      const done = await pollUntil('the task to complete on node B', async () => {
        const got = await post(a, 'tasks/get', { taskId });
        return got.result?.status === 'working' ? null : got;
      }, 20_000);
      assert.is(done.result?.status, 'completed', JSON.stringify(done));
      assert.is((done.result?.result as { content: { text: string }[] }).content[0]?.text, 'Done on the cluster.');
      assert.is(await readFile(path.join(box.ws, 'cluster.txt'), 'utf8'), 'cluster\n');
    });
  });
} else {
  test.skip(NAME, () => undefined);
  process.stderr.write(`cluster task input test skipped: ${found.reason}\n`);
}

test.run();
