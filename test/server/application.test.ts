// The whole tree in-process: sessions on connection actors, a hung or out-of-memory scheduler worker
// is detected and replaced, in-flight requests are answered, and the session resumes from its checkpoint.

import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Application } from '../../src/server/application.ts';
import { createLogger } from '../../src/log/logger.ts';
import type { Session } from '../../src/connection/session.ts';
import type { RegisteredSession } from '../../src/server/session-registry.ts';

interface Client {
  entry: RegisteredSession;
  session: Session;
  lines: Record<string, unknown>[];
  send(msg: object): void;
  reply(id: number, timeoutMs?: number): Promise<Record<string, unknown>>;
}

async function client(app: Application): Promise<Client> {
  const lines: Record<string, unknown>[] = [];
  const waiters: { id: number; resolve: (m: Record<string, unknown>) => void }[] = [];
  const entry = await app.open({
    principal: { kind: 'local' },
    transport: 'stdio',
    send: (out) => {
      const msg = JSON.parse(out.line) as Record<string, unknown>;
      lines.push(msg);
      for (const w of [...waiters]) if (w.id === msg.id) { waiters.splice(waiters.indexOf(w), 1); w.resolve(msg); }
    },
  });
  return {
    entry,
    session: entry.session,
    lines,
    send: (msg) => entry.deliver({ kind: 'line', text: JSON.stringify(msg) }),
    reply: (id, timeoutMs = 10_000) => {
      const seen = lines.find((l) => l.id === id && l.method === undefined);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no reply to ${id} within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({ id, resolve: (m) => { clearTimeout(timer); resolve(m); } });
      });
    },
  };
}

const initialize = (id: number) => ({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } } });

const app = suite('the application tree');
let ws: string;
let application: Application;
let gaveUp: string | null = null;

app.before(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-app-')));
  await writeFile(path.join(ws, 'a.txt'), 'hello\n');
  application = await Application.start({
    workspace: ws, harness: 'super-pi-code', pageSize: 50, toolTimeoutMs: 30_000, threads: 2, toolThreads: 1,
    chaos: {}, logger: createLogger('error'), serverVersion: 'test', onGiveUp: (m) => { gaveUp = m; },
  });
});

app.after(async () => {
  await application.stop();
  await rm(ws, { recursive: true, force: true });
});

app('serves a session through its connection actor', async () => {
  const c = await client(application);
  c.send(initialize(1));
  assert.is(((await c.reply(1)).result as { protocolVersion: string }).protocolVersion, '2025-03-26');
  c.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read', arguments: { path: 'a.txt' } } });
  const r = (await c.reply(2)).result as { content: { text: string }[] };
  assert.match(r.content[0]!.text, /hello/);
  await application.close(c.entry.id);
});

for (const how of ['hang', 'oom', 'throw'] as const) {
  app(`a scheduler worker that ${how === 'hang' ? 'hangs' : how === 'oom' ? 'exhausts its memory' : 'throws'} is replaced; in-flight requests get an error; the session resumes`, async () => {
    const c = await client(application);
    c.send(initialize(1));
    await c.reply(1);
    const host = application.scheduler.threads().find((t) => [...t.actors.keys()].some((k) => k.startsWith('session')) && t.actors.size > 0);
    assert.ok(host, 'the session actor lives on a thread');
    const before = application.health().restarts;
    host!.sabotage(how);
    // Requests sent to the dying worker are answered (with an error), not lost.
    c.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
    const answered = await c.reply(2, 20_000);
    assert.ok('result' in answered || (answered.error as { code: number }).code === -32010, JSON.stringify(answered));
    await host!.exited;
    // The session is restored from its checkpoint: no second initialize needed, version kept.
    c.send({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
    const tools = (await c.reply(3, 10_000)).result as { tools: { name: string; annotations?: unknown }[] };
    assert.is(tools.tools.length, 8);
    assert.ok(tools.tools[0]!.annotations, 'still speaking 2025-03-26 (annotations), as negotiated before the crash');
    assert.ok(application.health().restarts > before, 'the supervisor counted restarts');
    for (let i = 0; i < 100 && application.scheduler.threads().filter((t) => t.isReady).length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    assert.is(application.scheduler.threads().filter((t) => t.isReady).length, 2, 'the dead thread was replaced');
    await application.close(c.entry.id);
  });
}

app('a worker death takes down only the sessions on it; the others do not notice', async () => {
  const clients = await Promise.all([client(application), client(application), client(application), client(application)]);
  clients.forEach((c) => c.send(initialize(1)));
  await Promise.all(clients.map((c) => c.reply(1)));
  const victim = clients[0]!;
  const host = application.scheduler.threads().find((t) => t.actors.has(victim.session.actorId ?? ''))!;
  const bystanders = clients.filter((c) => !host.actors.has(c.session.actorId ?? ''));
  assert.ok(bystanders.length >= 1, 'placement spreads sessions over both threads');
  for (const b of bystanders) for (let i = 0; i < 50; i++) b.send({ jsonrpc: '2.0', id: 100 + i, method: 'ping' });
  host.kill();
  for (const b of bystanders) {
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => b.reply(100 + i)));
    assert.ok(replies.every((r) => 'result' in r), 'a bystander got only results');
  }
  await host.exited;
  victim.send({ jsonrpc: '2.0', id: 7, method: 'ping' });
  assert.equal((await victim.reply(7)).result, {}, 'the victim session was restarted and serves again');
  assert.is(gaveUp, null);
  for (const c of clients) await application.close(c.entry.id);
});

app.run();

const storm = suite('restart storms');

storm('scheduler workers dying faster than the intensity allows escalate to the root, which gives up with a clear message', async () => {
  let message: string | null = null;
  const stormy = await Application.start({
    workspace: os.tmpdir(), harness: 'super-pi-code', pageSize: 50, toolTimeoutMs: 30_000, threads: 2, toolThreads: 1,
    chaos: { killWorkerEveryMs: 10 }, logger: createLogger('emergency'), serverVersion: 'test', onGiveUp: (m) => { message = m; },
  });
  for (let i = 0; i < 200 && message === null; i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(message, 'the root gave up');
  assert.match(message!, /super-pi gave up: the root supervisor "root" exited/);
  assert.match(message!, /supervisor "schedulers" gave up: child "scheduler-\d" was killed, and restarting it would make 11 restarts within 2000 ms/);
  await stormy.stop();
});

storm.run();
