// Many clients at once: 200 Streamable HTTP sessions and 200 WebSocket sessions call tools at the same
// time with the same request ids; each must get exactly its own replies.

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';

const HTTP_SESSIONS = 200;
const WS_SESSIONS = 200;
const CALLS = 5;
const ACCEPT = 'application/json, text/event-stream';
const initialize = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'many', version: '1' } } });
const readCall = (id: number, file: string) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read', arguments: { path: file } } });

function sseMessages(text: string): { id?: number; result?: { content: { text: string }[] } }[] {
  if (text.startsWith('{')) return [JSON.parse(text)];
  return text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
}

// undici's "fetch failed" hides why (reset, refused, timeout): name it, so a failure under load can be told apart.
async function fetch(url: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await globalThis.fetch(url, init);
  } catch (err) {
    const cause = (err as Error & { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`${(err as Error).message} (${init.method ?? 'GET'} ${url}): ${cause?.code ?? ''} ${cause?.message ?? String(cause)}`);
  }
}

async function httpClient(url: string, who: string): Promise<string[]> {
  const init = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT }, body: initialize });
  const session = init.headers.get('mcp-session-id') as string;
  await init.text();
  const headers = { 'content-type': 'application/json', accept: ACCEPT, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
  await (await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
  const replies = await Promise.all(Array.from({ length: CALLS }, async (_, i) => {
    const res = await fetch(url, { method: 'POST', headers, body: readCall(i + 1, `${who}.txt`) });
    const msgs = sseMessages(await res.text());
    const mine = msgs.find((m) => m.id === i + 1);
    return mine?.result?.content[0]?.text ?? `missing reply ${i + 1}`;
  }));
  await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': session } });
  return replies;
}

function wsClient(url: string, who: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'mcp');
    const replies = new Map<number, string>();
    const timer = setTimeout(() => reject(new Error(`${who}: timed out with ${replies.size} replies`)), 60_000);
    ws.on('open', () => ws.send(initialize));
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as { id?: number; result?: { content?: { text: string }[] } };
      if (msg.id === 0) {
        ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
        for (let i = 1; i <= CALLS; i++) ws.send(readCall(i, `${who}.txt`));
        return;
      }
      if (typeof msg.id === 'number') replies.set(msg.id, msg.result?.content?.[0]?.text ?? 'error');
      if (replies.size === CALLS) {
        clearTimeout(timer);
        ws.close();
        resolve([...replies.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]));
      }
    });
    ws.on('error', reject);
  });
}

const many = suite('many clients');
let box: Sandbox;
let server: RunningServer;

many.before(async () => {
  box = await makeSandbox();
  await Promise.all(Array.from({ length: HTTP_SESSIONS + WS_SESSIONS }, (_, i) => writeFile(path.join(box.ws, `client-${i}.txt`), `I am client-${i}\n`)));
  // 200 HTTP sessions with 5 calls each in flight and 200 WebSockets, all from 127.0.0.1: up to 1,200 connections
  // from one address, past the per-address cap (MAX_CONNECTIONS_PER_ADDRESS, 1,024; 503 past it,
  // test/e2e/connection-limits.test.ts). This test is about routing replies, so its server allows more.
  server = await startHttpServerProcess(box.ws, ['--max-connections-per-address', '4096']);
});
many.after(async () => {
  assert.is(await server.stop(), 0);
  await box.cleanup();
});

many(`${HTTP_SESSIONS} HTTP and ${WS_SESSIONS} WebSocket sessions at once, same request ids, each gets only its own replies`, async () => {
  const started = Date.now();
  const results = await Promise.all([
    ...Array.from({ length: HTTP_SESSIONS }, (_, i) => httpClient(server.url, `client-${i}`).then((r) => ({ who: `client-${i}`, r }))),
    ...Array.from({ length: WS_SESSIONS }, (_, i) => wsClient(server.wsUrl, `client-${HTTP_SESSIONS + i}`).then((r) => ({ who: `client-${HTTP_SESSIONS + i}`, r }))),
  ]);
  let leaks = 0;
  const missing: string[] = [];
  for (const { who, r } of results) {
    assert.is(r.length, CALLS);
    for (const text of r) {
      // No reply at all (refused, failed) is not a leak, but fails the test too, saying so.
      if (!text.includes('I am client-')) missing.push(`${who}: ${text.slice(0, 120)}`);
      else if (!text.includes(`I am ${who}\n`) || (text.match(/I am client-/g) ?? []).length !== 1) leaks++;
    }
  }
  assert.equal(missing.slice(0, 5), [], `every call was answered (${missing.length} were not)`);
  console.log(`  ${results.length} sessions x ${CALLS} calls in ${Date.now() - started} ms`);
  assert.is(leaks, 0, 'no reply reached the wrong session');
  const health = await (await fetch(server.url.replace('/mcp', '/health'))).json() as { status: string };
  assert.is(health.status, 'ok');
});

many.run();
