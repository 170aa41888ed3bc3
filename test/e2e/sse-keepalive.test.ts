// SSE keep-alive end to end, over real sockets to a server started with `--sse-keepalive 0.2`: a
// `subscriptions/listen` stream (read with node:http) gets `: keep-alive` comments while idle, after its
// acknowledgment and with no event id; a GET stream (read on a raw socket, to see every byte of the
// connection) gets them too and nothing once the server ended it; a long `harness_task` call's stream gets
// them while the model thinks, then its answer; and the SDK v2 client's listen hears a transcript update
// with comments interleaved on its stream.

import http from 'node:http';
import net from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type ScriptStep, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';
import { pollUntil } from '../hang-guard.ts';

const INTERVAL_MS = 200;
const COMMENT = ': keep-alive\n\n';
const TOKEN = 'keepalive-test-token-0123456789';
const MODEL_DELAY_MS = 2500;
const answer = (text: string, delayMs?: number): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] }, ...(delayMs === undefined ? {} : { delayMs }) });
const comments = (text: string) => text.split(COMMENT).length - 1;
const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'keepalive-e2e', version: '1' } };

const e2e = suite('SSE keep-alive comments on idle streams (--sse-keepalive 0.2)');
let box: Sandbox;
let home: string;
let model: Awaited<ReturnType<typeof startScriptedServer>>;
let server: RunningServer;

e2e.before(async () => {
  box = await makeSandbox();
  home = await mkdtemp(path.join(os.tmpdir(), 'superpi-keepalive-home-'));
  // The long call's model answers late; the SDK test's two tasks at once.
  model = await startScriptedServer([answer('slow', MODEL_DELAY_MS), ...Array.from({ length: 6 }, (_, i) => answer(`answer ${i + 1}`))]);
  server = await startHttpServerProcess(box.ws, ['--sse-keepalive', String(INTERVAL_MS / 1000)], {
    SUPERPI_TOKENS: `${TOKEN}=alice`, SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_API_KEY: 'sk-test', SUPERPI_HOME: home,
  });
});
e2e.after(async () => {
  await server?.stop();
  await model?.close();
  await box?.cleanup();
  if (home) await rm(home, { recursive: true, force: true });
});

/** A POST whose reply is read as it arrives: its status, headers and the text so far (with when each comment came). */
function streamingPost(body: object, headers: Record<string, string>): Promise<{ res: http.IncomingMessage; req: http.ClientRequest; text: () => string; commentTimes: number[]; ended: Promise<void> }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent: false, headers: {
      'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${TOKEN}`, ...headers,
    } }, (res) => {
      let text = '';
      const commentTimes: number[] = [];
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        for (let i = comments(chunk); i > 0; i--) commentTimes.push(Date.now());
      });
      const ended = new Promise<void>((done) => res.on('end', () => done()).on('close', () => done()));
      resolve({ res, req, text: () => text, commentTimes, ended });
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** initialize (2025-06-18) and notifications/initialized: the session's id. */
async function openSession(): Promise<string> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${TOKEN}` };
  const r = await fetch(server.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) });
  assert.is(r.status, 200);
  await r.text();
  const id = r.headers.get('mcp-session-id') as string;
  const sent = await fetch(server.url, { method: 'POST', headers: { ...headers, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  assert.is(sent.status, 202);
  return id;
}

e2e('a listen stream (node:http) gets comments while idle: after its acknowledgment, no id, no faster than the interval', async () => {
  const started = Date.now();
  const s = await streamingPost(
    { jsonrpc: '2.0', id: 'L', method: 'subscriptions/listen', params: { _meta: META, notifications: {} } },
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' },
  );
  try {
    assert.is(s.res.statusCode, 200);
    assert.match(String(s.res.headers['content-type']), /text\/event-stream/);
    await pollUntil('three comments on the idle listen stream', () => (comments(s.text()) >= 3 ? true : null), 15_000, 20);
    const blocks = s.text().split('\n\n').filter((b) => b !== '');
    // The stream is open from the POST's headers: on a loaded machine the session's actor may take longer
    // than the interval to boot, so a comment may come before the acknowledgment, never an event.
    const events = blocks.filter((b) => b !== ': keep-alive');
    assert.is(events.length, 1, `one event, the acknowledgment: ${JSON.stringify(events)}`);
    assert.match(events[0] ?? '', /notifications\/subscriptions\/acknowledged/, 'the acknowledgment is the first event');
    // The first comes no sooner than one interval of silence, the next no sooner than one more each.
    const third = (s.commentTimes[2] as number) - started;
    assert.ok(third >= 3 * INTERVAL_MS - 100, `the third comment came ${third} ms after the request`);
  } finally {
    s.req.destroy();
  }
});

e2e('a GET stream (raw socket) gets comments while idle, and not one byte once the server ended it', async () => {
  const id = await openSession();
  const url = new URL(server.url);
  const socket = net.connect(Number(url.port), url.hostname);
  let bytes = '';
  socket.setEncoding('utf8').on('data', (d: string) => (bytes += d));
  try {
    await new Promise<void>((resolve, reject) => socket.once('connect', () => resolve()).once('error', reject));
    socket.write(`GET /mcp HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${TOKEN}\r\nMcp-Session-Id: ${id}\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n`);
    await pollUntil('two comments on the idle GET stream', () => (comments(bytes) >= 2 ? true : null), 15_000, 20);
    assert.match(bytes, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(bytes, /content-type: text\/event-stream/i);
    assert.not.match(bytes, /\nid: /, 'comments carry no event id');
    // DELETE ends the session, and the server ends its GET stream: the last chunk, then silence.
    const deleted = await fetch(server.url, { method: 'DELETE', headers: { authorization: `Bearer ${TOKEN}`, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' } });
    assert.is(deleted.status, 200);
    await pollUntil('the end of the chunked stream', () => (bytes.includes('\r\n0\r\n\r\n') ? true : null), 15_000, 20);
    const atEnd = bytes.length;
    await new Promise((r) => setTimeout(r, 4 * INTERVAL_MS));
    assert.is(bytes.slice(atEnd), '', 'nothing is written on the connection after the stream ended');
    assert.ok(bytes.endsWith('\r\n0\r\n\r\n'));
  } finally {
    socket.destroy();
  }
});

e2e('a long harness_task call: its stream gets comments while the model takes its time, then the answer', async () => {
  const id = await openSession();
  const s = await streamingPost(
    { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'take your time' } } },
    { 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' },
  );
  try {
    assert.is(s.res.statusCode, 200);
    await s.ended;
    const text = s.text();
    const answerAt = text.indexOf('"id":7');
    assert.ok(answerAt > 0, `the answer is on the stream: ${text.slice(0, 500)}`);
    const before = text.slice(0, answerAt);
    assert.ok(comments(before) >= 2, `comments while the model took ${MODEL_DELAY_MS} ms: ${JSON.stringify(before)}`);
    assert.not.ok(JSON.parse(/data: (.*"id":7.*)\n/.exec(text)?.[1] ?? '{}').result?.isError, text.slice(answerAt, answerAt + 300));
  } finally {
    s.req.destroy();
  }
});

e2e('the SDK v2 client\'s listen hears a transcript update with comments interleaved on its stream', async () => {
  let listenComments = 0;
  // The SDK's fetch, watched: the listen POST's SSE body passes through a counter of comments on its way to the SDK.
  const watched: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const isListen = typeof init?.body === 'string' && init.body.includes('"subscriptions/listen"');
    if (!isListen || response.body === null) return response;
    const decoder = new TextDecoder();
    const counted = response.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        listenComments += comments(decoder.decode(chunk, { stream: true }));
        out.enqueue(chunk);
      },
    }));
    return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  const client = new Client({ name: 'keepalive-e2e', version: '2.4.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { fetch: watched, requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
  try {
    assert.is(client.getNegotiatedProtocolVersion(), '2026-07-28');
    const updates: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', async (n) => {
      updates.push(n.params.uri);
    });
    const first = await client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'one' } });
    const conversation = (first.structuredContent as { conversation_id?: string } | undefined)?.conversation_id;
    assert.ok(typeof conversation === 'string', JSON.stringify(first));
    const uri = `superpi://conversation/${conversation}/transcript`;
    const subscription = await client.listen({ resourceSubscriptions: [uri] });
    assert.equal(subscription.honoredFilter, { resourceSubscriptions: [uri] });
    await pollUntil('three comments on the SDK\'s listen stream', () => (listenComments >= 3 ? true : null), 15_000, 20);
    const second = await client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'two', conversation_id: conversation } });
    assert.not.ok(second.isError, JSON.stringify(second));
    await pollUntil('the transcript update on the stream', () => (updates.includes(uri) ? true : null), 30_000, 20);
    // Still a live stream after the update: more comments come while it is idle again.
    const seen = listenComments;
    await pollUntil('a comment after the update', () => (listenComments > seen ? true : null), 15_000, 20);
    await subscription.close();
    await client.listTools();
  } finally {
    await client.close();
  }
});

e2e.run();
