// Streamable HTTP session life: the session cap, idle reaping, Last-Event-ID replay on the standalone
// stream, and a client that disconnects mid-request (its work is cancelled, nothing crashes).

import { randomInt } from 'node:crypto';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { allGone, atLeast, killLeftovers } from '../tools/processes.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';

const ACCEPT = 'application/json, text/event-stream';
const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 's', version: '1' } } });

async function open(url: string): Promise<{ id: string; headers: Record<string, string> } | number> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT }, body: init });
  await r.text();
  if (r.status !== 200) return r.status;
  const id = r.headers.get('mcp-session-id') as string;
  const headers = { 'content-type': 'application/json', accept: ACCEPT, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' };
  await (await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
  return { id, headers };
}

const sessions = suite('HTTP sessions');
let box: Sandbox;
let server: RunningServer;

sessions.before(async () => {
  box = await makeSandbox();
  server = await startHttpServerProcess(box.ws, ['--max-sessions', '3', '--session-idle', '1', '--allow-anonymous-writes']);
});
sessions.after(async () => {
  assert.is(await server.stop(), 0);
  await box.cleanup();
});

sessions('past --max-sessions a new session is refused with 503 and a clear message', async () => {
  const a = await open(server.url);
  const b = await open(server.url);
  const c = await open(server.url);
  assert.ok(typeof a === 'object' && typeof b === 'object' && typeof c === 'object');
  const r = await fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT }, body: init });
  assert.is(r.status, 503);
  assert.match(await r.text(), /3 sessions are open, the limit \(--max-sessions\)/);
  for (const s of [a, b, c]) if (typeof s === 'object') await fetch(server.url, { method: 'DELETE', headers: { 'mcp-session-id': s.id } });
});

sessions('an idle session is reaped after --session-idle; its id is then 404', async () => {
  const s = await open(server.url);
  assert.ok(typeof s === 'object');
  await new Promise((r) => setTimeout(r, 2500));
  const r = await fetch(server.url, { method: 'POST', headers: (s as { headers: Record<string, string> }).headers, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) });
  assert.is(r.status, 404);
});

/** The session's standalone SSE stream (GET), open once this resolves; `readUntil` reads it until `until` matches or `ms` pass, then closes it. */
async function standalone(headers: Record<string, string>, extra: Record<string, string> = {}): Promise<{ readUntil(until: RegExp, ms: number): Promise<string> }> {
  const controller = new AbortController();
  const res = await fetch(server.url, { headers: { ...headers, accept: 'text/event-stream', ...extra }, signal: controller.signal });
  assert.is(res.status, 200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  return {
    async readUntil(until, ms) {
      let text = '';
      const deadline = Date.now() + ms;
      while (!until.test(text) && Date.now() < deadline) {
        const { value } = await Promise.race([reader.read(), new Promise<{ value: undefined; done: true }>((r) => setTimeout(() => r({ value: undefined, done: true }), 500))]);
        if (value) text += new TextDecoder().decode(value);
      }
      controller.abort();
      return text;
    },
  };
}

sessions('a client reconnecting with Last-Event-ID gets what it missed on the standalone stream', async () => {
  const s = await open(server.url);
  assert.ok(typeof s === 'object');
  const { headers } = s as { headers: Record<string, string> };
  await (await fetch(server.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'debug' } }) })).text();
  // The client's stream, open before the events: a 202 does not wait for the log line its stray response
  // causes, so the test reads the events off this stream rather than assume they were logged by then.
  const first = await standalone(headers);
  // Two stray responses: each makes the server log at debug level, which goes to the client as an event.
  for (const stray of ['a', 'b']) {
    const r = await fetch(server.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: `stray-${stray}`, result: {} }) });
    assert.is(r.status, 202);
  }
  assert.match(await first.readUntil(/id: 2\n/, 10_000), /id: 1\n[^]*id: 2\n/, 'both events were sent on the first stream');
  // Reconnecting after event 1: event 2 again, event 1 not.
  const text = await (await standalone(headers, { 'last-event-id': '1' })).readUntil(/id: 2\n/, 3000);
  assert.match(text, /id: 2\nevent: message\ndata: .*notifications\/message/);
  assert.not.match(text, /id: 1\n/, 'the event the client had already seen is not sent again');
  await fetch(server.url, { method: 'DELETE', headers: { 'mcp-session-id': (s as { id: string }).id } });
});

sessions('a client that disconnects mid-request has its work cancelled; the server goes on', async () => {
  const s = await open(server.url);
  assert.ok(typeof s === 'object');
  const { headers } = s as { headers: Record<string, string> };
  const marker = path.join(box.ws, 'not-cancelled');
  const controller = new AbortController();
  // bash is `ask` under super-pi-code: answer the person's question on the POST's stream, then hang up.
  const running = await fetch(server.url, {
    method: 'POST', headers, signal: controller.signal,
    body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'bash', arguments: { command: `sleep 2 && touch ${marker}` } } }),
  });
  const reader = (running.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  while (!/elicitation\/create/.test(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  const question = JSON.parse((/data: (.*elicitation\/create.*)/.exec(text) as RegExpExecArray)[1] as string) as { id: string };
  await (await fetch(server.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: { allow: true } } }) })).text();
  await new Promise((r) => setTimeout(r, 300));
  controller.abort();
  await new Promise((r) => setTimeout(r, 2500));
  assert.is(await access(marker).then(() => true, () => false), false, 'the command was killed when its client went away');
  // (This session has meanwhile been idle past --session-idle and reaped; the server serves new ones.)
  const again = await open(server.url);
  assert.ok(typeof again === 'object', `a new session opens (got ${String(again)})`);
  const health = await (await fetch(server.url.replace('/mcp', '/health'))).json() as { status: string };
  assert.is(health.status, 'ok');
});

sessions.run();

// The test above cannot tell a cancelled command from a reaped session: with --session-idle 1 the
// reaper kills the command too. Here the session outlives the test, so only the disconnect can stop it.
const disconnect = suite('HTTP client disconnect (session idle far longer than the test)');
let longBox: Sandbox;
let longServer: RunningServer;

disconnect.before(async () => {
  longBox = await makeSandbox();
  longServer = await startHttpServerProcess(longBox.ws, ['--session-idle', '600', '--allow-anonymous-writes']);
});
disconnect.after(async () => {
  assert.is(await longServer.stop(), 0);
  await longBox.cleanup();
});

disconnect('a client that hangs up mid-call has its command killed on the server; its session lives on', async () => {
  const s = await open(longServer.url);
  assert.ok(typeof s === 'object');
  const { headers } = s as { headers: Record<string, string> };
  const marker = path.join(longBox.ws, 'written-after-2s');
  // `sleep 2.<random>`: a little over 2 s, and a command line no other process on the machine has.
  const pause = `2.${randomInt(1e8, 1e9)}`;
  const command = `sleep ${pause} && touch ${marker}`;
  const controller = new AbortController();
  try {
    const running = await fetch(longServer.url, {
      method: 'POST', headers, signal: controller.signal,
      body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'bash', arguments: { command } } }),
    });
    const reader = (running.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!/elicitation\/create/.test(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const question = JSON.parse((/data: (.*elicitation\/create.*)/.exec(text) as RegExpExecArray)[1] as string) as { id: string };
    await (await fetch(longServer.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: { allow: true } } }) })).text();
    // The command is running (so its absence later means something); hang up half a second into it.
    await atLeast(pause, 1);
    await atLeast(command, 1);
    await new Promise((r) => setTimeout(r, 500));
    controller.abort();
    // Wait past the moment the command would have written its marker, had it lived.
    await new Promise((r) => setTimeout(r, 3000));
    assert.is(await access(marker).then(() => true, () => false), false, 'the command was killed when its client went away: no marker');
    assert.ok(await allGone(command), 'no process of the command remains (its shell)');
    assert.ok(await allGone(pause), 'no process of the command remains (its sleep)');
    // The session was not reaped: the disconnect alone stopped the command.
    const ping = await fetch(longServer.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'ping' }) });
    assert.is(ping.status, 200);
    assert.equal((JSON.parse(await ping.text()) as { result: unknown }).result, {});
    await fetch(longServer.url, { method: 'DELETE', headers: { 'mcp-session-id': (s as { id: string }).id } });
  } finally {
    killLeftovers(pause);
    killLeftovers(command);
  }
});

disconnect.run();
