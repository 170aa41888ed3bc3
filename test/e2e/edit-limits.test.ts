// `edit` cannot hold the server: over HTTP, with two SDK clients on one server process, an edit with
// 100,000 items is refused at once naming the limit, and while a 1,000-edit change of a 16 MB file is
// being matched (on a tool-pool thread), the other session's pings keep being answered.

import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EDIT_MAX_EDITS } from '../../src/limits.ts';
import { guarded } from '../hang-guard.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess, textOf } from './fixtures.ts';

/**
 * Pings answered while the edit ran, so they overlapped it. The real check is each ping's hang guard:
 * matching on the sessions' thread (1,000 × 16 MB of searching) held every ping there for tens of seconds.
 */
const PINGS_WHILE_EDITING = 5;

const e2e = suite('edit limits');
let box: Sandbox;
let server: RunningServer;
const clients: Client[] = [];

async function connect(): Promise<Client> {
  const c = new Client({ name: 'edit-limits', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  clients.push(c);
  return c;
}

e2e.before(async () => {
  box = await makeSandbox();
  // One scheduler thread: both sessions' actors share it, so a tool body run there would stall the pinger too.
  server = await startHttpServerProcess(box.ws, ['--allow-anonymous-writes', '--threads', '1']);
});
e2e.after(async () => {
  for (const c of clients) await c.close();
  assert.is(await server.stop(), 0);
  await box.cleanup();
});

e2e('an edit with 100,000 items is refused with an isError result naming the limit (SEP-1303), and the file is untouched', async () => {
  const c = await connect();
  const edits = Array.from({ length: 100_000 }, (_, i) => ({ oldText: `t${i}`, newText: 'u' }));
  const result = await c.callTool({ name: 'edit', arguments: { path: 'README.md', edits } });
  assert.is(result.isError, true, 'refused');
  assert.match(textOf(result), `more than ${EDIT_MAX_EDITS} items`);
  assert.is(await readFile(path.join(box.ws, 'README.md'), 'utf8'), '# Demo project\n\nA tiny project for tests.\n');
});

e2e('another session\'s pings are answered while a 1,000-edit change of a 16 MB file is matched', async () => {
  const lines = Array.from({ length: 400_000 }, (_, i) => `line ${String(i).padStart(7, '0')} of the big file....`);
  await writeFile(path.join(box.ws, 'big.txt'), `${lines.join('\n')}\n`);
  const edits = Array.from({ length: EDIT_MAX_EDITS }, (_, i) => ({ oldText: lines[i * 400] as string, newText: `edited ${i}` }));
  const [editor, pinger] = [await connect(), await connect()];
  let editing = true;
  const edit = editor.callTool({ name: 'edit', arguments: { path: 'big.txt', edits } }, undefined, { timeout: 300_000 }).finally(() => (editing = false));
  let answered = 0;
  while (editing) {
    await guarded(pinger.ping(), 'a ping while the edit runs');
    if (editing) answered++;
    // Paced: the SDK client keeps an abort listener per request until it settles, and thousands warn.
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  const result = await edit;
  assert.not.ok(result.isError, textOf(result));
  assert.match(textOf(result), `Successfully applied ${EDIT_MAX_EDITS} edits to big.txt.`);
  const after = await readFile(path.join(box.ws, 'big.txt'), 'utf8');
  assert.ok(after.startsWith('edited 0\nline 0000001'));
  assert.ok(answered >= PINGS_WHILE_EDITING, `only ${answered} pings were answered while the edit ran`);
});

e2e.run();
