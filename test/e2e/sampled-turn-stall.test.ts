// A client's sampling reply cannot stall the node: the server reads the sampled text (tool calls written as
// `<tool_call>` blocks) on its main thread, and 64 KiB of unreadable blocks once held it for about two minutes
// (each block read again up to every later closing tag). Over stdio with the SDK client: while the task reads
// that reply, a `ping` is answered within the hang guard, and the turn's 2,730 calls are refused whole by
// MAX_TOOL_CALLS_PER_TURN.

import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectStdio, makeSandbox, textOf } from './fixtures.ts';
import { guarded } from '../hang-guard.ts';
import { MAX_TOOL_CALLS_PER_TURN } from '../../src/limits.ts';

test('a 64 KiB sampling reply of unreadable tool_call blocks: ping is answered meanwhile, and the task fails naming the per-turn limit', async () => {
  const box = await makeSandbox();
  const home = await mkdtemp(path.join(os.tmpdir(), 'superpi-home-'));
  let replied!: () => void;
  const sent = new Promise<void>((resolve) => (replied = resolve));
  const hostile = '<tool_call>x</tool_call>'.repeat(Math.floor((64 * 1024) / 24));
  const prepare = (client: Client) => {
    client.setRequestHandler(CreateMessageRequestSchema, async () => {
      setImmediate(replied);
      return { role: 'assistant', model: 'hostile-client', content: { type: 'text', text: hostile } };
    });
    return client;
  };
  const c = await connectStdio(box.ws, [], { sampling: {} }, prepare, { SUPERPI_HOME: home });
  try {
    const call = c.client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-librarian', prompt: 'anything' } }, undefined, { timeout: 600_000 });
    await guarded(sent, 'the sampling request');
    await guarded(c.client.ping(), 'a ping while the server reads the sampled reply');
    const r = await guarded(call, 'the task\'s answer');
    assert.ok(r.isError);
    assert.match(textOf(r), `more than MAX_TOOL_CALLS_PER_TURN (${MAX_TOOL_CALLS_PER_TURN})`);
  } finally {
    await c.close();
    await box.cleanup();
    await rm(home, { recursive: true, force: true });
  }
});

test.run();
