// Rule (security review, confirmation scopes): answering the person's confirmation of a tool call is the
// yes that runs the call, so it needs what the call needs. Over Streamable HTTP a principal's session
// serves every token of that principal, and a 2025 confirmation (`elicitation/create` under an `ask`
// rule) was answered by any of them: a token holding only mcp:read confirmed the bash call an mcp:exec
// token started, and the command ran. Now the answer is refused 403 insufficient_scope naming the scope
// the call needs, it never reaches the session, and the question stays pending for a token that may
// answer it. In 2026-07-28 the answer comes back inside the retried call, which needs the call's scope
// already (and a state sealed over a bash call opens for no other tool). Caller class: token principals (OAuth).

import { access } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AccessTokenVerifier } from '../../src/auth/access-token.ts';
import { BearerAuthority } from '../../src/auth/bearer-authority.ts';
import { oauthConfig } from '../../src/auth/oauth-config.ts';
import { answerCapability, capabilityFor, type Capability } from '../../src/auth/scopes.ts';
import { parseTokenList } from '../../src/auth/tokens.ts';
import { actingQuestionId, toolAnswered } from '../../src/mcp/acting-questions.ts';
import { toolNames } from '../../src/tools/definition.ts';
import { scopeRefusal } from '../../src/transports/scoped-frames.ts';
import { startLoopbackIssuer } from '../auth/issuer-fixture.ts';
import { feed, fold, ready, req } from '../mcp/golden.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from '../e2e/fixtures.ts';

const RESOURCE = 'https://mcp.confirm.example/mcp';
const ACCEPT = 'application/json, text/event-stream';
const LEGACY = { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': '2025-06-18' };
const YES = { action: 'accept', content: { allow: true } };

type Message = { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string }; method?: string; params?: unknown };

let box: Sandbox;
let issuer: Awaited<ReturnType<typeof startLoopbackIssuer>>;
let server: RunningServer;

test.before(async () => {
  box = await makeSandbox();
  issuer = await startLoopbackIssuer(RESOURCE);
  server = await startHttpServerProcess(box.ws, ['--threads', '1', '--tool-threads', '1', '--oauth-issuer', issuer.issuer, '--resource', RESOURCE]);
});

test.after(async () => {
  await server?.stop();
  await issuer?.close();
  await box?.cleanup();
});

const exists = (p: string) => access(p).then(() => true, () => false);
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

function messagesOf(text: string): Message[] {
  const t = text.trimStart();
  if (t.startsWith('{') || t.startsWith('[')) return [JSON.parse(t) as Message];
  return text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as Message);
}

async function post(body: unknown, headers: Record<string, string>) {
  const res = await fetch(server.url, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
  return { status: res.status, challenge: res.headers.get('www-authenticate') ?? '', session: res.headers.get('mcp-session-id') ?? '', text: await res.text() };
}

/** A 2025 session of `token`'s principal whose client answers elicitation. */
async function legacySession(token: string): Promise<Record<string, string>> {
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'confirm', version: '1' } } };
  const opened = await post(init, { ...LEGACY, ...bearer(token) });
  assert.is(opened.status, 200, opened.text);
  const inSession = { 'mcp-session-id': opened.session };
  assert.is((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { ...LEGACY, ...bearer(token), ...inSession })).status, 202);
  return inSession;
}

/** Starts a tools/call on its own POST and reads its stream up to the server's question; `rest` reads on to the end. */
async function callUntilAsked(token: string, inSession: Record<string, string>, call: object) {
  const res = await fetch(server.url, { method: 'POST', headers: { ...LEGACY, ...bearer(token), ...inSession }, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: call }) });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  while (!/elicitation\/create/.test(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  const question = messagesOf(text).find((m) => m.method === 'elicitation/create');
  assert.ok(question, `the call asked the person first (${text})`);
  const rest = async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    return messagesOf(text);
  };
  return { id: question!.id, rest };
}

test('the capability an answer needs is the capability of the call it lets go on, for every tool, both kinds of question and any ticket', () => {
  fc.assert(fc.property(fc.constantFrom(...toolNames), fc.constantFrom('confirm' as const, 'ask' as const), fc.nat(), (tool, kind, ticket) => {
    const id = actingQuestionId(kind, tool, ticket);
    assert.is(toolAnswered(id), tool);
    assert.is(answerCapability(id), capabilityFor('tools/call', { name: tool }));
    assert.is(capabilityFor(undefined, undefined, id), capabilityFor('tools/call', { name: tool }));
  }));
  // An acting question's id that names no tool (a checkpoint from before ids named one) needs the most.
  assert.is(answerCapability('superpi-confirm-12'), 'exec');
  assert.is(answerCapability('superpi-ask-3'), 'exec');
  // Anything else answers no call: roots/list, a ping, a client's own ids.
  fc.assert(fc.property(fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.constant(undefined)), (id) => {
    fc.pre(typeof id !== 'string' || !/^superpi-(confirm|ask)-/.test(id));
    assert.is(answerCapability(id), 'read');
  }));
  assert.is(answerCapability('superpi-roots-1'), 'read');
});

test('the core names the call in each question it asks a 2025 client: bash\'s and harness_task\'s confirmations, and a task\'s model turn, need mcp:exec to answer', () => {
  const idOf = (replies: unknown[]) => (replies.find((r) => (r as Message).method !== undefined) as Message | undefined)?.id;
  const bash = feed(ready('2025-06-18', { elicitation: {} }), req(1, 'tools/call', { name: 'bash', arguments: { command: 'true' } }));
  assert.match(String(idOf(bash.replies)), /^superpi-confirm-bash-\d+$/);
  assert.is(answerCapability(idOf(bash.replies)), 'exec');
  const assistant = ready('2025-06-18', { elicitation: {} }, { harness: 'super-pi-assistant' });
  const task = feed(assistant, req(2, 'tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-planner', prompt: 'plan' } }));
  assert.match(String(idOf(task.replies)), /^superpi-confirm-harness_task-\d+$/);
  assert.is(answerCapability(idOf(task.replies)), 'exec');
  const started = feed(ready('2025-06-18', { sampling: {} }), req(3, 'tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-planner', prompt: 'plan' } }));
  const run = started.effects.find((e) => e.kind === 'runTool');
  assert.ok(run && run.kind === 'runTool');
  const turn = fold(started.state, { kind: 'clientRequest', ticket: run.ticket, key: 1, method: 'sampling/createMessage', params: {} });
  assert.match(String(idOf(turn.replies)), /^superpi-ask-harness_task-\d+$/);
  assert.is(answerCapability(idOf(turn.replies)), 'exec');
});

test('WebSocket frames: an answer to a bash or write confirmation without its scope is refused with id null naming the scope; an answer to roots/list is not', () => {
  const config = oauthConfig({ issuers: ['https://issuer.example'], resource: RESOURCE });
  const verifier = new AccessTokenVerifier(config, { fetchJson: async () => ({}) });
  const auth = new BearerAuthority({ tokens: parseTokenList(''), requireAuth: false, oauth: { config, verifier, metadataUrl: `${RESOURCE}/metadata` } });
  const readOnly: ReadonlySet<Capability> = new Set(['read']);
  const answer = (id: string) => JSON.stringify({ jsonrpc: '2.0', id, result: YES });
  for (const [tool, scope] of [['bash', 'mcp:exec'], ['write', 'mcp:write'], ['harness_task', 'mcp:exec']] as const) {
    const refused = scopeRefusal(answer(actingQuestionId('confirm', tool, 4)), readOnly, auth);
    assert.ok(refused !== null, `${tool}'s confirmation is refused`);
    const line = JSON.parse(refused!) as Message;
    assert.is(line.id, null, 'the server\'s own id is not answered as if it were a request of the client');
    assert.match(line.error!.message, new RegExp(`needs the scope "${scope}"`));
    assert.is(scopeRefusal(answer(actingQuestionId('confirm', tool, 4)), new Set<Capability>(['read', 'write', 'exec']), auth), null, 'with every host scope it goes on');
  }
  assert.is(scopeRefusal(answer('superpi-roots-1'), readOnly, auth), null);
});

test('2025 over HTTP: a read-only (or read+write) token of the same principal cannot confirm the bash call an exec token started; the command does not run; the question stays for the exec token', async () => {
  const [full, readOnly, readWrite] = await Promise.all([
    issuer.token('erin', 'mcp:read mcp:write mcp:exec'), issuer.token('erin', 'mcp:read'), issuer.token('erin', 'mcp:read mcp:write'),
  ]);
  const inSession = await legacySession(full);
  const file = path.join(box.ws, 'confirmed-by-read.txt');
  const call = await callUntilAsked(full, inSession, { name: 'bash', arguments: { command: 'echo ran > confirmed-by-read.txt' } });
  assert.match(String(call.id), /^superpi-confirm-bash-/);
  for (const token of [readOnly, readWrite]) {
    const refused = await post({ jsonrpc: '2.0', id: call.id, result: YES }, { ...LEGACY, ...bearer(token), ...inSession });
    assert.is(refused.status, 403, 'the answer is refused');
    assert.match(refused.challenge, /^Bearer error="insufficient_scope", scope="mcp:exec", /);
  }
  // The session goes on, and nothing ran: a ping after the refusals is answered, and the file is not there.
  const ping = await post({ jsonrpc: '2.0', id: 8, method: 'ping' }, { ...LEGACY, ...bearer(readOnly), ...inSession });
  assert.is(ping.status, 200);
  await new Promise((r) => setTimeout(r, 300));
  assert.not.ok(await exists(file), 'the command did not run');
  // The question was left pending: the exec token's answer runs the call, on its own POST's stream.
  assert.is((await post({ jsonrpc: '2.0', id: call.id, result: YES }, { ...LEGACY, ...bearer(full), ...inSession })).status, 202);
  const answered = (await call.rest()).find((m) => m.id === 7);
  assert.ok(answered?.result, 'the call was answered');
  assert.ok(await exists(file), 'the exec token\'s yes ran it');
});

test('2026-07-28 over HTTP: a retried bash call with its sealed state and a yes needs mcp:exec; the state retried as another tool opens nothing; the command does not run', async () => {
  const [full, readOnly] = await Promise.all([issuer.token('frank', 'mcp:read mcp:write mcp:exec'), issuer.token('frank', 'mcp:read')]);
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
    'io.modelcontextprotocol/clientInfo': { name: 'confirm', version: '1' },
  };
  const modern = (token: string, name: string) => ({ 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name, ...bearer(token) });
  const args = { command: 'echo ran > retried-by-read.txt' };
  const first = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'bash', arguments: args, _meta: meta } }, modern(full, 'bash'));
  const asked = messagesOf(first.text)[0]?.result as { resultType?: string; requestState?: string } | undefined;
  assert.is(asked?.resultType, 'input_required', first.text);
  const retry = { requestState: asked!.requestState, inputResponses: { confirm: YES }, _meta: meta };
  const refused = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'bash', arguments: args, ...retry } }, modern(readOnly, 'bash'));
  assert.is(refused.status, 403);
  assert.match(refused.challenge, /^Bearer error="insufficient_scope", scope="mcp:exec", /);
  // Named as a reading tool to pass the door, the bash call's state opens for no other call.
  const renamed = await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'read', arguments: { path: 'src/greet.ts' }, ...retry } }, modern(readOnly, 'read'));
  assert.is(messagesOf(renamed.text)[0]?.error?.code, -32602, renamed.text);
  await new Promise((r) => setTimeout(r, 300));
  assert.not.ok(await exists(path.join(box.ws, 'retried-by-read.txt')), 'the command did not run');
});

test.run();
