// What a 2026-07-28 listen naming transcripts leaves behind on the node once it ends: nothing. A pooled HTTP
// session serves every modern request of its principal for as long as they keep coming, so a watch that
// outlived its stream would let one client make the node watch every conversation it owns, one listen at a
// time, and deliver each of their appends to the session's actor for nothing. A 2025 subscription on the same
// session (stdio serves both eras on one) is the session's and stays until the session ends.

import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Application } from '../../src/server/application.ts';
import { createLogger } from '../../src/log/logger.ts';
import { HOME_ENV, openStore } from '../../src/store/location.ts';
import type { RegisteredSession } from '../../src/server/session-registry.ts';
import { killSessionThread, until } from './actor-crash.ts';
import { meta, SUB } from '../e2e/task-listen-wire.ts';

type Message = { id?: unknown; method?: string; params?: Record<string, unknown>; result?: unknown; error?: { code: number } };

const watches = suite('transcript watches of listen streams');
let home: string;
let ws: string;
let application: Application;
let conversations: string[] = [];
let gaveUp: string | null = null;
const homeBefore = process.env[HOME_ENV];
const uri = (id: string) => `superpi://conversation/${id}/transcript`;

watches.before(async () => {
  home = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-listen-watches-home-')));
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-listen-watches-ws-')));
  process.env[HOME_ENV] = home;
  const store = openStore({ home });
  conversations = Array.from({ length: 4 }, () => store.createConversation({ principal: 'local', sessionId: 'elsewhere', harness: 'super-pi-assistant' }).id);
  store.close();
  application = await Application.start({
    workspace: ws, harness: 'super-pi-code', pageSize: 50, toolTimeoutMs: 30_000, threads: 1, toolThreads: 1,
    chaos: {}, logger: createLogger('error'), serverVersion: 'test', onGiveUp: (m) => { gaveUp = m; },
  });
});

watches.after(async () => {
  await application?.stop();
  if (homeBefore === undefined) delete process.env[HOME_ENV];
  else process.env[HOME_ENV] = homeBefore;
  await rm(home, { recursive: true, force: true });
  await rm(ws, { recursive: true, force: true });
});

/** A session of the local user, its lines, and how to send and wait. */
async function openSession() {
  const lines: Message[] = [];
  const entry: RegisteredSession = await application.open({ principal: { kind: 'local' }, transport: 'stdio', send: (out) => { lines.push(JSON.parse(out.line) as Message); } });
  const send = (msg: object): void => entry.deliver({ kind: 'line', text: JSON.stringify(msg) });
  const acked = (listenId: string): Message | undefined => lines.find((m) => m.method === 'notifications/subscriptions/acknowledged' && (m.params?._meta as Record<string, unknown> | undefined)?.[SUB] === listenId);
  const listen = async (listenId: string, ids: readonly string[]): Promise<string[]> => {
    send({ jsonrpc: '2.0', id: listenId, method: 'subscriptions/listen', params: { notifications: { resourceSubscriptions: ids.map(uri) }, _meta: meta({}) } });
    await until(() => acked(listenId) !== undefined, `listen ${listenId} is acknowledged`);
    return (acked(listenId)?.params?.notifications as { resourceSubscriptions?: string[] }).resourceSubscriptions ?? [];
  };
  const cancel = (listenId: string): void => send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: listenId } });
  /** Sends a 2025 request and waits for its answer. */
  const ask = async (id: string, method: string, params?: object): Promise<Message> => {
    send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
    await until(() => s.lines.some((m) => m.id === id), `${method} ${id} is answered`);
    return s.lines.find((m) => m.id === id) as Message;
  };
  const initialize = async (): Promise<void> => {
    await ask('init', 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  };
  const s = { entry, lines, send, listen, cancel, ask, initialize };
  return s;
}

watches('a listen\'s transcripts are watched while it is open and no longer once it is cancelled; the stream goes on watching while another names them', async () => {
  const [a, b, c] = conversations as [string, string, string];
  const s = await openSession();
  assert.equal(await s.listen('l1', [a, b]), [uri(a), uri(b)]);
  assert.is(application.watching.transcripts, 2);
  assert.equal(await s.listen('l2', [b, c]), [uri(b), uri(c)]);
  assert.is(application.watching.transcripts, 3);
  s.cancel('l1');
  await until(() => application.watching.transcripts === 2, 'only what the open stream names is watched (b, c)');
  s.cancel('l2');
  await until(() => application.watching.transcripts === 0, 'nothing is watched once every stream ended');
  await application.close(s.entry.id);
});

watches('one listen after another over every conversation of the principal leaves the node watching none', async () => {
  const s = await openSession();
  for (const [i, id] of conversations.entries()) {
    await s.listen(`seq-${i}`, [id]);
    s.cancel(`seq-${i}`);
  }
  await until(() => application.watching.transcripts === 0, 'no ended stream leaves a watch');
  await application.close(s.entry.id);
});

watches('a 2025 subscription on the same session stays watched after a listen naming the same transcript ends', async () => {
  const [a, b] = conversations as [string, string];
  const s = await openSession();
  s.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
  s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  s.send({ jsonrpc: '2.0', id: 'sub', method: 'resources/subscribe', params: { uri: uri(a) } });
  await until(() => s.lines.some((m) => m.id === 'sub' && m.result !== undefined), 'the subscription is answered');
  assert.is(application.watching.transcripts, 1);
  await s.listen('l3', [a, b]);
  assert.is(application.watching.transcripts, 2);
  s.cancel('l3');
  await until(() => application.watching.transcripts === 1, 'the listen\'s own watch (b) ended');
  s.send({ jsonrpc: '2.0', id: 'ping', method: 'ping' });
  await until(() => s.lines.some((m) => m.id === 'ping'), 'the session answers after the cancel');
  assert.is(application.watching.transcripts, 1, 'the 2025 subscription (a) is still watched');
  await application.close(s.entry.id);
  await until(() => application.watching.transcripts === 0, 'the closed session watches nothing');
});

watches('a 2025 unsubscribe releases the node\'s watch of the transcript; the session watches nothing it is not subscribed to', async () => {
  const [a, b] = conversations as [string, string];
  const s = await openSession();
  try {
    await s.initialize();
    assert.ok((await s.ask('sub-a', 'resources/subscribe', { uri: uri(a) })).result, 'subscribed to a');
    assert.ok((await s.ask('sub-b', 'resources/subscribe', { uri: uri(b) })).result, 'subscribed to b');
    assert.is(application.watching.transcripts, 2);
    assert.ok((await s.ask('unsub-a', 'resources/unsubscribe', { uri: uri(a) })).result);
    await until(() => application.watching.transcripts === 1, 'the unsubscribed transcript (a) is no longer watched');
    assert.ok((await s.ask('unsub-b', 'resources/unsubscribe', { uri: uri(b) })).result);
    await until(() => application.watching.transcripts === 0, 'nothing is watched once every subscription ended, while the session lives');
  } finally {
    // Closed even when an assertion failed, so the next test starts with nothing watched.
    await application.close(s.entry.id);
  }
});

watches('a listen naming a transcript keeps its own watch across an unsubscribe from it on the same session', async () => {
  const [a] = conversations as [string];
  const s = await openSession();
  try {
    await s.initialize();
    assert.ok((await s.ask('sub', 'resources/subscribe', { uri: uri(a) })).result);
    assert.equal(await s.listen('l5', [a]), [uri(a)]);
    assert.is(application.watching.transcripts, 1);
    assert.ok((await s.ask('unsub', 'resources/unsubscribe', { uri: uri(a) })).result);
    await s.ask('ping', 'ping');
    assert.is(application.watching.transcripts, 1, 'the open listen still needs a');
    s.cancel('l5');
    await until(() => application.watching.transcripts === 0, 'released once nobody on the session needs it');
  } finally {
    await application.close(s.entry.id);
  }
});

watches('an open listen across a killed connection actor: acknowledged again, and once cancelled no transcript is watched', async () => {
  const [a] = conversations as [string];
  const s = await openSession();
  await s.listen('l4', [a]);
  await killSessionThread(application, s.entry.session);
  await until(() => s.lines.filter((m) => m.method === 'notifications/subscriptions/acknowledged' && (m.params?._meta as Record<string, unknown> | undefined)?.[SUB] === 'l4').length === 2, 'the stream is acknowledged again');
  assert.is(application.watching.transcripts, 1);
  s.cancel('l4');
  await until(() => application.watching.transcripts === 0, 'the dead incarnation\'s watch went with it, and the new one\'s with the cancel');
  assert.is(gaveUp, null, 'the session was never given up');
  await application.close(s.entry.id);
});

watches.run();
