// MAX_INPUT_CHARS_PER_PRINCIPAL end to end: a real server on 127.0.0.1. One token's session sends many
// large messages at once (concurrent POSTs of 4 MiB `ping`s). Before the bound they all went to its actor's
// mailbox on a scheduler thread, whose 256 MB heap they filled: both threads died of it again and again, and
// another caller's session on them had its requests answered -32010. Now what passes the bound is refused
// -32011 naming it; no scheduler thread dies; another token's calls (the SDK Client) are served throughout.

import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSandbox, startHttpServerProcess } from './fixtures.ts';

const TOKENS = 'alice-token-123=alice,bob-token-4567=bob';
const FLOOD = Number(process.env.FLOOD ?? 120);
/** A `ping` whose line is just under the default --max-message-bytes (4 MiB). */
const PAD = 4 * 1024 * 1024 - 200;

interface Posted {
  readonly status: number;
  readonly text: string;
  /** The Mcp-Session-Id the answer carries (an initialize's). */
  readonly session: string | null;
}

async function post(url: string, body: string, session: string | null): Promise<Posted> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer alice-token-123' };
  if (session !== null) Object.assign(headers, { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' });
  const res = await fetch(url, { method: 'POST', headers, body });
  return { status: res.status, text: await res.text(), session: res.headers.get('mcp-session-id') };
}

test('one principal flooding large messages is refused past MAX_INPUT_CHARS_PER_PRINCIPAL; no scheduler thread dies; another principal is served', async () => {
  const box = await makeSandbox();
  const server = await startHttpServerProcess(box.ws, [], { SUPERPI_TOKENS: TOKENS, SUPERPI_HOME: path.join(box.base, 'home') }, 'bundle');
  const bob = new Client({ name: 'bob', version: '1' });
  try {
    const opened = await post(server.url, JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'alice', version: '1' } } }), null);
    const session = opened.session;
    assert.ok(session, `alice has a session: ${opened.status} ${opened.text.slice(0, 200)}`);
    await post(server.url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), session);
    await bob.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: 'Bearer bob-token-4567' } } }));

    const tools = (await bob.listTools()).tools.length;
    const pad = 'x'.repeat(PAD);
    let flooding = true;
    const flood = Promise.all(Array.from({ length: FLOOD }, (_, i) =>
      post(server.url, `{"jsonrpc":"2.0","id":${i + 1},"method":"ping","params":{"pad":"${pad}"}}`, session).catch((err: unknown): Posted => ({ status: 0, text: String(err), session: null })),
    )).finally(() => (flooding = false));
    // Bob calls all through the flood: every call is served (none answered -32010 by a dying thread).
    let bobCalls = 0;
    do {
      const listed = await bob.listTools(undefined, { timeout: 60_000 });
      assert.is(listed.tools.length, tools, 'bob is served during the flood');
      bobCalls++;
    } while (flooding);
    const answers = await flood;

    assert.ok(bobCalls >= 1);
    assert.not.match(server.stderr(), 'scheduler worker error', 'no scheduler thread died');
    assert.not.match(server.stderr(), 'restart intensity exceeded');
    const crashed = answers.filter((a) => a.text.includes('-32010'));
    assert.is(crashed.length, 0, `none of alice's pings met a crash: ${crashed[0]?.text.slice(0, 300)}`);
    const refused = answers.filter((a) => a.text.includes('-32011'));
    assert.ok(refused.length > 0, 'past the bound alice is refused');
    for (const r of refused) assert.match(r.text, 'MAX_INPUT_CHARS_PER_PRINCIPAL');
    // Every POST is answered: a pong, the refusal, or the node's body budget (503) while they are read.
    for (const a of answers) assert.ok(a.status === 503 || a.text.includes('"result"') || a.text.includes('-32011'), `an answer: ${a.status} ${a.text.slice(0, 300)}`);
    assert.is(server.child.exitCode, null, 'the node is up');
    const after = await bob.listTools();
    assert.is(after.tools.length, tools, 'bob is served after the flood');
  } finally {
    await bob.close().catch(() => undefined);
    await server.stop();
    await box.cleanup();
  }
});

test.run();
