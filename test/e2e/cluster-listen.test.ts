// subscriptions/listen across a cluster (issue 24): two super-pi nodes on one PostgreSQL store. A
// 2026-07-28 listen stream is open on node A; the harness tasks that write the conversation run on node
// B (each stateless request is served where it lands); the stream on A hears them through the store's
// transcript notifications. Without PostgreSQL binaries the test is reported skipped, with the reason.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ScriptStep } from '../model/fixtures/scripted-server.ts';
import { findPostgres } from '../store/postgres-server.ts';
import { pollUntil } from '../hang-guard.ts';
import { clusterGround } from './fixtures.ts';
import { withClusterNodes } from './two-nodes.ts';

const TOKEN = 'cluster-listen-token-0123456789';
const answer = (text: string): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });
const T = (c: string) => `superpi://conversation/${c}/transcript`;
const NAME = 'a listen stream on node A hears a conversation written by tasks on node B, through the store';

function pinned(url: string): { client: Client; transport: StreamableHTTPClientTransport } {
  const client = new Client({ name: 'cluster-listen', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  return { client, transport: new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }) };
}

const found = findPostgres();
if (found.ok) {
  const ground = clusterGround(test, found);

  test(NAME, async () => {
    const clients: Client[] = [];
    await withClusterNodes(ground(), [answer('first'), answer('second'), answer('third')], { SUPERPI_TOKENS: `${TOKEN}=alice` }, async (a, b) => {
      try {
        const onA = pinned(a.url);
        const onB = pinned(b.url);
        await onA.client.connect(onA.transport);
        await onB.client.connect(onB.transport);
        clients.push(onA.client, onB.client);
        await onB.client.listTools();
        const first = await onB.client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'one' } });
        const conversation = (first.structuredContent as { conversation_id?: string } | undefined)?.conversation_id as string;
        assert.ok(typeof conversation === 'string', JSON.stringify(first));

        const updates: string[] = [];
        onA.client.setNotificationHandler('notifications/resources/updated', async (n) => {
          updates.push(n.params.uri);
        });
        const subscription = await onA.client.listen({ resourceSubscriptions: [T(conversation)] });
        assert.equal(subscription.honoredFilter, { resourceSubscriptions: [T(conversation)] }, 'node A finds the conversation node B started: it is in the shared store');

        const second = await onB.client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'two', conversation_id: conversation } });
        assert.not.ok(second.isError, JSON.stringify(second));
        await pollUntil('an update on node A\'s stream of the task that ran on node B', async () => (updates.includes(T(conversation)) ? true : null), 30_000, 50);
        await subscription.close();
      } finally {
        for (const c of clients) await c.close().catch(() => undefined);
      }
    });
  });
} else {
  test.skip(NAME, () => undefined);
  process.stderr.write(`cluster listen test skipped: ${found.reason}\n`);
}

test.run();
