// A 2025 session's resource subscriptions are bounded, end to end with the SDK 1.x client over stdio: with
// more conversations in the store than MAX_SESSION_SUBSCRIPTIONS, the subscribe past the limit is -32602
// naming it, the server goes on serving, a repeated subscribe is not counted, and an unsubscribe frees a place.

import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_SESSION_SUBSCRIPTIONS } from '../../src/limits.ts';
import { openStore } from '../../src/store/location.ts';
import { type Connected, connectStdio, makeSandbox, type Sandbox } from './fixtures.ts';

const limit = suite('the subscription limit over stdio');
const uriOf = (id: string) => `superpi://conversation/${id}/transcript`;
let box: Sandbox;
let home: string;
let server: Connected | undefined;

limit.before(async () => {
  box = await makeSandbox();
  home = await mkdtemp(path.join(os.tmpdir(), 'superpi-subs-home-'));
});
limit.after(async () => {
  await server?.close();
  await box.cleanup();
  await rm(home, { recursive: true, force: true });
});

limit('subscribing past MAX_SESSION_SUBSCRIPTIONS is -32602 naming it; the server stays up; an unsubscribe frees a place', async () => {
  // The local user's conversations, more than one session may subscribe to.
  const store = openStore({ home });
  const ids = Array.from({ length: MAX_SESSION_SUBSCRIPTIONS + 1 }, () => store.createConversation({ principal: 'local', sessionId: 'elsewhere', harness: 'super-pi-assistant' }).id);
  store.close();
  server = await connectStdio(box.ws, [], {}, (c) => c, { SUPERPI_HOME: home });
  const { client } = server;
  for (const id of ids.slice(0, MAX_SESSION_SUBSCRIPTIONS)) await client.subscribeResource({ uri: uriOf(id) });
  const over = ids[MAX_SESSION_SUBSCRIPTIONS] as string;
  const refused = await client.subscribeResource({ uri: uriOf(over) }).then(() => null, (e: unknown) => e);
  assert.instance(refused, McpError);
  assert.is((refused as McpError).code, -32602);
  assert.match((refused as McpError).message, `MAX_SESSION_SUBSCRIPTIONS (${MAX_SESSION_SUBSCRIPTIONS})`);
  assert.equal(await client.ping(), {}, 'the server goes on serving');
  await client.subscribeResource({ uri: uriOf(ids[0] as string) });
  await client.unsubscribeResource({ uri: uriOf(ids[1] as string) });
  assert.equal(await client.subscribeResource({ uri: uriOf(over) }), {}, 'the freed place is taken');
  assert.not.match(server.stderr(), /uncaught|unhandled/i);
});

limit.run();
