// MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL end to end: a real server on 127.0.0.1 and the SDK's Client over
// Streamable HTTP. One token's calls are held in flight across two of its sessions (a `bash` call under `ask`
// waits for a confirmation the client never gives); past the limit its next call, on either session, is
// -32011 naming the limit and nothing runs, while another token's call is served; once a session holding
// some of them ends, the first token calls again (the count went back down).

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pollUntil } from '../hang-guard.ts';
import { makeSandbox, startHttpServerProcess, textOf } from './fixtures.ts';

const TOKENS = 'alice-token-123=alice,bob-token-4567=bob';
const LIMIT = 4;

/** A client whose confirmations never come back: each `bash` call stays in flight, waiting for one. */
async function connect(url: string, token: string, asked: { n: number }): Promise<Client> {
  const client = new Client({ name: token, version: '1' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, () => {
    asked.n++;
    return new Promise(() => undefined);
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

async function refusal(call: Promise<unknown>): Promise<{ code?: number; message?: string }> {
  try {
    await call;
  } catch (err) {
    return err as { code?: number; message?: string };
  }
  throw new Error('the call was served');
}

test('one principal past the limit across its sessions is refused -32011 naming it; another is served; the count goes back down', async () => {
  const box = await makeSandbox();
  await writeFile(path.join(box.ws, 'a.txt'), 'hello\n');
  const server = await startHttpServerProcess(box.ws, ['--max-requests-in-flight-per-principal', String(LIMIT)], { SUPERPI_TOKENS: TOKENS, SUPERPI_HOME: path.join(box.base, 'home') });
  const clients: Client[] = [];
  try {
    const asked = { n: 0 };
    const first = await connect(server.url, 'alice-token-123', asked);
    const second = await connect(server.url, 'alice-token-123', asked);
    const bob = await connect(server.url, 'bob-token-4567', { n: 0 });
    clients.push(first, second, bob);
    const held = (c: Client) => c.callTool({ name: 'bash', arguments: { command: 'echo never' } }, undefined, { timeout: 120_000 }).catch(() => undefined);
    for (let i = 0; i < 3; i++) void held(first);
    void held(second);
    await pollUntil('the four calls wait for their confirmations', () => (asked.n === LIMIT ? true : null), 20_000);
    for (const c of [first, second]) {
      const err = await refusal(c.callTool({ name: 'read', arguments: { path: 'a.txt' } }));
      assert.is(err.code, -32011);
      assert.match(err.message ?? '', 'MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL');
    }
    assert.match(textOf(await bob.callTool({ name: 'read', arguments: { path: 'a.txt' } })), 'hello', 'another principal is served');
    // The first session ends (DELETE): its three calls leave the count, so alice may call again.
    await (first.transport as StreamableHTTPClientTransport | undefined)?.terminateSession();
    await first.close();
    const again = await pollUntil('alice is served again once a session holding her calls ended', async () => {
      try {
        return textOf(await second.callTool({ name: 'read', arguments: { path: 'a.txt' } }));
      } catch {
        return null;
      }
    }, 20_000);
    assert.match(again, 'hello');
  } finally {
    for (const c of clients) await c.close().catch(() => undefined);
    await server.stop();
    await box.cleanup();
  }
});

test.run();
