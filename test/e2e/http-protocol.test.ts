// Streamable HTTP as an independent client sees it (plain fetch, no SDK), issue 10 items 9 and 12-15.
// Rules, and the caller classes they concern (anonymous remote callers and token principals alike
// unless said otherwise):
// - every POST that carries a request is answered on that POST, errors included (item 12);
// - a request id in flight belongs to one POST: reusing it is refused there, the first is untouched (13);
// - initialize on an existing session is refused as on stdio; no second session opens (14);
// - /health tells callers without a valid token nothing but {status} when tokens or --require-auth are
//   configured (15: anonymous callers, callers with a wrong token);
// - anonymous callers together, and each token principal, have their own session cap, so anonymous
//   callers cannot take the sessions token principals need (9).

import { Agent, request } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { MAX_BATCH_LENGTH } from '../../src/limits.ts';
import { HANG_GUARD_MS, pollUntil } from '../hang-guard.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';

const ACCEPT = 'application/json, text/event-stream';
const TOKENS = 'alice-token-123=alice,bob-token-4567=bob';
const ALICE = { authorization: 'Bearer alice-token-123' };
const BOB = { authorization: 'Bearer bob-token-4567' };

type Message = { id?: unknown; result?: unknown; error?: { code: number; message: string }; method?: string; params?: unknown };

const initBody = (version = '2025-06-18', capabilities: Record<string, unknown> = {}) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: version, capabilities, clientInfo: { name: 'raw', version: '1' } } });

/** POSTs with a deadline: a POST that gets no HTTP response is a failure, not a hung test. */
async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, body, signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text };
}

/** The JSON-RPC message(s) of a reply that may be JSON or an SSE stream. */
function messagesOf(text: string): Message[] {
  const t = text.trimStart();
  if (t.startsWith('{') || t.startsWith('[')) {
    const v = JSON.parse(t) as unknown;
    return (Array.isArray(v) ? v : [v]) as Message[];
  }
  return text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as Message);
}

interface Opened { id: string; headers: Record<string, string> }

async function openSession(url: string, version = '2025-06-18', extra: Record<string, string> = {}, capabilities: Record<string, unknown> = {}): Promise<Opened> {
  const r = await post(url, initBody(version, capabilities), extra);
  assert.is(r.status, 200, r.text);
  const id = r.headers.get('mcp-session-id') as string;
  const headers = { ...extra, 'mcp-session-id': id, 'mcp-protocol-version': version };
  assert.is((await post(url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers)).status, 202);
  return { id, headers };
}

const ping = (id: unknown) => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });
const healthOf = async (s: RunningServer, headers: Record<string, string> = {}) =>
  (await (await fetch(s.url.replace('/mcp', '/health'), { headers })).json()) as Record<string, unknown>;

const http = suite('Streamable HTTP, raw');
let box: Sandbox;
let open: RunningServer;
let withTokens: RunningServer;

http.before(async () => {
  box = await makeSandbox();
  [open, withTokens] = await Promise.all([
    startHttpServerProcess(box.ws, ['--allow-anonymous-writes']),
    startHttpServerProcess(box.ws, ['--max-sessions', '4', '--max-sessions-per-principal', '2', '--max-anonymous-sessions', '1'], { SUPERPI_TOKENS: TOKENS }),
  ]);
});
http.after(async () => {
  assert.is(await open.stop(), 0);
  assert.is(await withTokens.stop(), 0);
  await box.cleanup();
});

http('an idle keep-alive connection is kept 65 s (README Limits), so a client reusing it is not cut off mid-request', async () => {
  // undici's fetch under load sent a request on a connection the server was closing after Node's 5 s
  // default: "other side closed" for a request the server never saw.
  const header = await new Promise<string>((resolve, reject) => {
    const req = request(new URL('/health', open.url), { agent: new Agent({ keepAlive: true }) }, (res) => {
      res.resume();
      res.on('end', () => resolve(String(res.headers['keep-alive'])));
    });
    req.on('error', reject);
    req.end();
  });
  assert.is(header, 'timeout=65');
});

http('item 12: a batch POSTed under 2025-06-18 is answered on that POST: 400 with -32600, never a hang', async () => {
  const s = await openSession(open.url);
  const r = await post(open.url, `[${ping(2)},${ping(3)}]`, s.headers);
  assert.is(r.status, 400);
  const [error] = messagesOf(r.text);
  assert.is(error?.error?.code, -32600);
  assert.match(error?.error?.message ?? '', /batch.*2025-06-18/);
  assert.is(error?.id, null);
  // The session is untouched: its next request is answered normally.
  assert.equal(messagesOf((await post(open.url, ping(4), s.headers)).text)[0]?.result, {});
});

http('item 12: a body that is not a message (42, "x", true, null) or an empty batch is 400 with -32600, not 202', async () => {
  const s = await openSession(open.url);
  for (const body of ['42', '"x"', 'true', 'null', '[]']) {
    const r = await post(open.url, body, s.headers);
    assert.is(r.status, 400, `${body} → ${r.status}`);
    assert.is(messagesOf(r.text)[0]?.error?.code, -32600, body);
  }
  // Also before any session exists, and for an object that is no JSON-RPC message.
  assert.is((await post(open.url, '42')).status, 400);
  const notAMessage = await post(open.url, JSON.stringify({ jsonrpc: '2.0', id: 9 }), s.headers);
  assert.is(notAMessage.status, 400);
  assert.equal(messagesOf(notAMessage.text)[0]?.id, 9);
  assert.is(messagesOf(notAMessage.text)[0]?.error?.code, -32600);
});

http('item 12: under 2025-03-26 a batch is answered as one array on its POST; an invalid element refuses the whole batch', async () => {
  const s = await openSession(open.url, '2025-03-26');
  const r = await post(open.url, `[${ping(2)},${ping('b')}]`, s.headers);
  assert.is(r.status, 200, r.text);
  assert.equal(messagesOf(r.text).map((m) => m.id).sort(), [2, 'b']);
  const bad = await post(open.url, `[${ping(5)},42]`, s.headers);
  assert.is(bad.status, 400);
  const errors = messagesOf(bad.text);
  assert.is(errors.length, 1);
  assert.is(errors[0]?.error?.code, -32600);
  assert.match(errors[0]?.error?.message ?? '', /nothing in this batch was run/);
  // Too long, or an element nested past MAX_JSON_DEPTH: refused whole, on the POST.
  const long = await post(open.url, `[${Array.from({ length: MAX_BATCH_LENGTH + 1 }, (_, i) => ping(1000 + i)).join(',')}]`, s.headers);
  assert.is(long.status, 400);
  assert.match(messagesOf(long.text)[0]?.error?.message ?? '', /MAX_BATCH_LENGTH/);
  const deepBatch = await post(open.url, `[${ping(7)},{"jsonrpc":"2.0","id":8,"method":"ping","params":{"a":${'['.repeat(5000)}${']'.repeat(5000)}}}]`, s.headers);
  assert.is(deepBatch.status, 400);
  assert.match(messagesOf(deepBatch.text)[0]?.error?.message ?? '', /MAX_JSON_DEPTH/);
  // A single request that deep is the core's to refuse (-32602, with its id): on its own POST too.
  const deepOne = await post(open.url, `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"a":${'['.repeat(5000)}${']'.repeat(5000)}}}`, s.headers);
  assert.is(deepOne.status, 200);
  assert.equal([messagesOf(deepOne.text)[0]?.id, messagesOf(deepOne.text)[0]?.error?.code], [9, -32602]);
  // The same id twice in one batch: the second is refused, the first answered.
  const twice = messagesOf((await post(open.url, `[${ping(6)},${ping(6)}]`, s.headers)).text);
  assert.equal(twice.map((m) => (m.error ? m.error.code : 'ok')).sort(), [-32600, 'ok'].sort());
});

http('item 13: a request id in flight on one POST is -32600 on a second POST; the first gets its own answer', async () => {
  const s = await openSession(open.url, '2025-06-18', {}, { elicitation: {} });
  // bash asks the person first (elicitation): the call stays in flight until the question is answered.
  const controller = new AbortController();
  const first = await fetch(open.url, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...s.headers }, signal: controller.signal,
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'bash', arguments: { command: 'echo first-call' } } }),
  });
  const reader = (first.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  while (!/elicitation\/create/.test(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  const second = await post(open.url, ping(7), s.headers);
  assert.is(second.status, 200);
  const [dup] = messagesOf(second.text);
  assert.is(dup?.id, 7);
  assert.is(dup?.error?.code, -32600);
  assert.match(dup?.error?.message ?? '', /already used in this session by a request in flight/);
  // Another id meanwhile is fine.
  assert.equal(messagesOf((await post(open.url, ping(8), s.headers)).text)[0]?.result, {});
  const question = messagesOf(text).find((m) => m.method === 'elicitation/create') as Message;
  assert.is((await post(open.url, JSON.stringify({ jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: { allow: true } } }), s.headers)).status, 202);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  const answer = messagesOf(text).find((m) => m.id === 7);
  assert.ok(answer?.result, `the tool call's POST got its result (${text})`);
  assert.match(JSON.stringify(answer?.result), /first-call/);
  assert.not.ok(messagesOf(text).some((m) => m.id === 7 && m.error), 'and no error for it');
  // Once answered, the id may be used again.
  assert.equal(messagesOf((await post(open.url, ping(7), s.headers)).text)[0]?.result, {});
});

http('item 14: initialize POSTed with an existing Mcp-Session-Id is refused on that POST; the session goes on', async () => {
  const s = await openSession(open.url);
  const before = (await healthOf(open)).httpSessions;
  const again = await post(open.url, initBody(), s.headers);
  assert.is(again.status, 200);
  assert.is(again.headers.get('mcp-session-id'), s.id, 'no new session id');
  const [refused] = messagesOf(again.text);
  assert.is(refused?.error?.code, -32600);
  assert.match(refused?.error?.message ?? '', /already initialized/);
  assert.is((await healthOf(open)).httpSessions, before, 'no second session was opened');
  assert.equal(messagesOf((await post(open.url, ping(2), s.headers)).text)[0]?.result, {});
});

http('item 15: /health gives callers without a valid token only {status} when tokens are configured; a token holder sees everything', async () => {
  assert.equal(Object.keys(await healthOf(withTokens)), ['status']);
  assert.equal(Object.keys(await healthOf(withTokens, { authorization: 'Bearer wrong-token' })), ['status']);
  const full = await healthOf(withTokens, ALICE);
  assert.is(full.status, 'ok');
  assert.ok(typeof full.httpSessions === 'number' && Array.isArray(full.workers));
  // A loopback server with no tokens and no --require-auth keeps the full view for its own user.
  assert.ok(typeof (await healthOf(open)).httpSessions === 'number');
});

http('item 15: a server bound to a non-loopback address without tokens gives everyone only {status}, as its observer gives nothing', async () => {
  const exposed = await startHttpServerProcess(box.ws, ['--host', '0.0.0.0']);
  try {
    const port = new URL(exposed.url).port;
    const health = await (await fetch(`http://127.0.0.1:${port}/health`)).json() as Record<string, unknown>;
    assert.equal(Object.keys(health), ['status']);
    assert.is(health.status, 'ok');
  } finally {
    assert.is(await exposed.stop(), 0);
  }
});

const wsStatus = (url: string, headers: Record<string, string> = {}) => new Promise<{ status: number | 'open'; ws?: WebSocket }>((resolve) => {
  const ws = new WebSocket(url, ['mcp'], { headers });
  ws.once('open', () => resolve({ status: 'open', ws }));
  ws.once('unexpected-response', (_req, res) => resolve({ status: res.statusCode ?? 0 }));
  ws.once('error', () => resolve({ status: 0 }));
});

http('item 9: anonymous callers together, and each token principal, have their own session cap; the global cap is last', async () => {
  const url = withTokens.url;
  // --max-anonymous-sessions 1: the second anonymous session (HTTP or WebSocket) is 429 and names the flag.
  const anon = await openSession(url);
  const anon2 = await post(url, initBody());
  assert.is(anon2.status, 429);
  assert.match(anon2.text, /--max-anonymous-sessions/);
  assert.is((JSON.parse(anon2.text) as Message).error?.code, -32600);
  assert.is((await wsStatus(withTokens.wsUrl)).status, 429);
  // --max-sessions-per-principal 2: alice's third is 429 and names the flag; bob is not affected by it.
  await openSession(url, '2025-06-18', ALICE);
  const aliceWs = await wsStatus(withTokens.wsUrl, ALICE);
  assert.is(aliceWs.status, 'open');
  const alice3 = await post(url, initBody(), ALICE);
  assert.is(alice3.status, 429);
  assert.match(alice3.text, /--max-sessions-per-principal/);
  await openSession(url, '2025-06-18', BOB);
  // --max-sessions 4 is now reached: bob's second is 503 and names the global flag.
  const bob2 = await post(url, initBody(), BOB);
  assert.is(bob2.status, 503);
  assert.match(bob2.text, /--max-sessions\)/);
  // Slots come back: a closed WebSocket frees alice's, a DELETE frees the anonymous one.
  aliceWs.ws?.close();
  // The server learns of the close asynchronously (a fixed 300 ms wait could lose on a loaded machine): until
  // it has, alice's initialize is refused by the global cap (503, which opens nothing); then it is answered.
  const alice = await pollUntil('alice\'s slot freed by the closed WebSocket', async () => {
    const r = await post(url, initBody(), ALICE);
    return r.status === 503 ? null : r;
  }, HANG_GUARD_MS, 50);
  assert.is(alice.status, 200, alice.text);
  assert.is((await fetch(url, { method: 'DELETE', headers: anon.headers })).status, 200);
  const anon3 = await post(url, initBody());
  assert.is(anon3.status, 200, anon3.text);
});

http.run();
