// Rule (security review, finding 2): every MCP path checks the token's scopes. A token lacking `mcp:read`
// is refused at the door of each one — POST, GET and DELETE of /mcp, and the WebSocket upgrade — with 403
// and the `insufficient_scope` challenge naming mcp:read, before any session slot, stream or socket is
// taken; `tasks/update` (its answers let a task run the call its person was asked about) needs what the
// task's tool needs, `mcp:exec`, on HTTP and on a WebSocket. Caller class: token principals (OAuth).
// Each refusal is checked against the server's own counts (/health) and its per-principal quota of one
// session: a refused attempt holds nothing, so the same principal's good token opens a session after it.

import { request } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { startLoopbackIssuer } from '../auth/issuer-fixture.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from '../e2e/fixtures.ts';

const RESOURCE = 'https://mcp.door.example/mcp';
const METADATA = 'https://mcp.door.example/.well-known/oauth-protected-resource/mcp';
const CHALLENGE_READ = `Bearer error="insufficient_scope", scope="mcp:read", resource_metadata="${METADATA}", error_description="this call needs mcp:read"`;
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
const INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'door', version: '1' } } });
const TASKS_UPDATE = { jsonrpc: '2.0', id: 7, method: 'tasks/update', params: { taskId: '00000000-0000-4000-8000-000000000000', inputResponses: {} } };

let box: Sandbox;
let issuer: Awaited<ReturnType<typeof startLoopbackIssuer>>;
let server: RunningServer;
/** Carol's tokens: every host scope, none but write and exec, read alone. */
let full: string;
let noRead: string;
let readOnly: string;
/** Another principal's token, to read /health's counts without touching carol's quota. */
let operator: string;

test.before(async () => {
  box = await makeSandbox();
  issuer = await startLoopbackIssuer(RESOURCE);
  server = await startHttpServerProcess(box.ws, ['--threads', '1', '--tool-threads', '1', '--oauth-issuer', issuer.issuer, '--resource', RESOURCE, '--max-sessions-per-principal', '1']);
  [full, noRead, readOnly, operator] = await Promise.all([
    issuer.token('carol', 'mcp:read mcp:write mcp:exec'), issuer.token('carol', 'mcp:write mcp:exec mcp:observe'),
    issuer.token('carol', 'mcp:read'), issuer.token('operator', 'mcp:read'),
  ]);
});

test.after(async () => {
  await server?.stop();
  await issuer?.close();
  await box?.cleanup();
});

/** The server's open sessions by transport, as /health tells a caller with a valid token. */
async function counts(): Promise<{ httpSessions: number; webSockets: number }> {
  const body = await (await fetch(server.url.replace(/\/mcp$/, '/health'), { headers: { authorization: `Bearer ${operator}` } })).json() as { httpSessions: number; webSockets: number };
  return { httpSessions: body.httpSessions, webSockets: body.webSockets };
}

/** Waits until /health shows `expected` (a closed socket's session ends a moment after the close). */
async function settle(expected: { httpSessions: number; webSockets: number }): Promise<void> {
  for (;;) {
    const now = await counts();
    if (now.httpSessions === expected.httpSessions && now.webSockets === expected.webSockets) return;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A request's status, WWW-Authenticate and session id; a stream's body is not read (it never ends by itself). */
function send(method: string, token: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; challenge: string; session: string; text: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const req = request(server.url, { method, headers: { ...HEADERS, authorization: `Bearer ${token}`, ...headers } }, (res) => {
      const stream = String(res.headers['content-type'] ?? '').startsWith('text/event-stream') && method === 'GET';
      const text = stream ? Promise.resolve('') : new Promise<string>((r) => {
        let b = '';
        res.on('data', (d: Buffer) => (b += d.toString()));
        res.on('end', () => r(b));
      });
      resolve({ status: res.statusCode ?? 0, challenge: String(res.headers['www-authenticate'] ?? ''), session: String(res.headers['mcp-session-id'] ?? ''), text });
      if (stream) res.destroy();
    });
    req.on('error', reject);
    req.end(body);
  });
}

type Opened = { ws: WebSocket; reply: (id: number) => Promise<Record<string, unknown>> };

/** Opens a WebSocket to /mcp: the status and challenge of a refused upgrade, or the socket and a reader of its replies by id. */
function openSocket(token: string): Promise<{ status: number; challenge: string } | Opened> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(server.wsUrl, 'mcp', { headers: { authorization: `Bearer ${token}` } });
    const replies = new Map<number, (m: Record<string, unknown>) => void>();
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as Record<string, unknown>;
      replies.get(m.id as number)?.(m);
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve({ status: res.statusCode ?? 0, challenge: String(res.headers['www-authenticate'] ?? '') });
      ws.terminate();
    });
    ws.once('open', () => resolve({ ws, reply: (id) => new Promise((r) => replies.set(id, r)) }));
    ws.once('error', (err) => reject(err));
  });
}

async function initialized(open: Opened): Promise<void> {
  const answer = open.reply(1);
  open.ws.send(INITIALIZE);
  assert.ok((await answer).result, 'initialize answered');
  open.ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
}

async function closed(open: Opened): Promise<void> {
  const gone = new Promise((r) => open.ws.once('close', r));
  open.ws.close();
  await gone;
}

test('WebSocket upgrade: a token without mcp:read is 403 insufficient_scope naming mcp:read and opens nothing; with it, the socket serves', async () => {
  await settle({ httpSessions: 0, webSockets: 0 });
  const refused = await openSocket(noRead);
  // Had it been let in, its socket is closed first, so the tests after this one start from nothing held.
  if ('ws' in refused) await closed(refused).then(() => settle({ httpSessions: 0, webSockets: 0 }));
  assert.ok('status' in refused, 'the upgrade was refused');
  if (!('status' in refused)) return;
  assert.is(refused.status, 403);
  assert.is(refused.challenge, CHALLENGE_READ);
  assert.equal(await counts(), { httpSessions: 0, webSockets: 0 }, 'no session was opened');
  // The per-principal quota is one session: the refused upgrade took no slot, so carol's good token gets it.
  const open = await openSocket(full);
  assert.ok('ws' in open, 'the good token upgrades');
  if (!('ws' in open)) return;
  await initialized(open);
  assert.equal(await counts(), { httpSessions: 0, webSockets: 1 });
  await closed(open);
  await settle({ httpSessions: 0, webSockets: 0 });
});

test('Streamable HTTP: GET, DELETE and POST with a token without mcp:read are 403 naming mcp:read and leave the session as it was; with it they work', async () => {
  const opened = await send('POST', full, {}, INITIALIZE);
  assert.is(opened.status, 200);
  await opened.text;
  const session = opened.session;
  assert.ok(session !== '', 'a session id');
  assert.equal(await counts(), { httpSessions: 1, webSockets: 0 });
  const inSession = { 'mcp-session-id': session };
  for (const [method, body] of [['GET', undefined], ['DELETE', undefined], ['POST', JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' })]] as const) {
    const r = await send(method, noRead, { ...inSession, accept: 'application/json, text/event-stream' }, body);
    assert.is(r.status, 403, method);
    assert.is(r.challenge, CHALLENGE_READ, method);
    await r.text;
  }
  // A POST opening a session is refused at the door too: carol's one slot stays with her session.
  const initRefused = await send('POST', noRead, {}, INITIALIZE);
  assert.is(initRefused.status, 403);
  await initRefused.text;
  assert.equal(await counts(), { httpSessions: 1, webSockets: 0 }, 'the DELETE ended nothing, the initialize opened nothing');
  const ping = await send('POST', full, inSession, JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }));
  assert.is(ping.status, 200, 'the session still serves');
  assert.match(await ping.text, /"id":3,"result":\{\}/);
  // With mcp:read (read alone is enough for a stream and for ending the session).
  const stream = await send('GET', readOnly, { ...inSession, accept: 'text/event-stream' });
  assert.is(stream.status, 200, 'GET opens the stream');
  const ended = await send('DELETE', readOnly, inSession);
  assert.is(ended.status, 200, 'DELETE ends the session');
  await ended.text;
  assert.equal(await counts(), { httpSessions: 0, webSockets: 0 });
});

test('tasks/update needs mcp:exec: refused naming it for a read-only token on HTTP (403) and on a WebSocket (a JSON-RPC error); with it, it reaches the session', async () => {
  // Dave's tokens: this test needs no slot another test's failure could have left held.
  const [readOnly, full] = await Promise.all([issuer.token('dave', 'mcp:read'), issuer.token('dave', 'mcp:read mcp:write mcp:exec')]);
  // Over HTTP: a read-only session, then the update.
  const opened = await send('POST', readOnly, {}, INITIALIZE);
  assert.is(opened.status, 200);
  await opened.text;
  const inSession = { 'mcp-session-id': opened.session };
  const refused = await send('POST', readOnly, inSession, JSON.stringify(TASKS_UPDATE));
  assert.is(refused.status, 403);
  assert.match(refused.challenge, /^Bearer error="insufficient_scope", scope="mcp:exec", /);
  await refused.text;
  // The same principal stepped up: the update reaches the session's core, which answers it (there is no such task).
  const served = await send('POST', full, inSession, JSON.stringify(TASKS_UPDATE));
  assert.is(served.status, 200);
  const answer = JSON.parse(await served.text) as { id: number; error?: { message: string } };
  assert.is(answer.id, 7);
  assert.not.match(answer.error?.message ?? '', /scope/, 'answered by the core, not refused for a scope');
  const ended = await send('DELETE', full, inSession);
  assert.is(ended.status, 200);
  await ended.text;
  // Over a WebSocket: the frame is refused naming mcp:exec; the socket goes on.
  for (const [token, refusedHere] of [[readOnly, true], [full, false]] as const) {
    const open = await openSocket(token);
    assert.ok('ws' in open);
    if (!('ws' in open)) return;
    await initialized(open);
    const reply = open.reply(7);
    open.ws.send(JSON.stringify(TASKS_UPDATE));
    const message = String(((await reply).error as { message?: string } | undefined)?.message ?? '');
    if (refusedHere) assert.match(message, /needs the scope "mcp:exec"/);
    else assert.not.match(message, /scope/);
    await closed(open);
    await settle({ httpSessions: 0, webSockets: 0 });
  }
});

test.run();
