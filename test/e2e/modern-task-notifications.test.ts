// Task status notifications end to end (Tasks extension, SEP-2663), with raw JSON-RPC (the SDK v2 client
// cannot drive SEP-2663) against a server with its own model (a scripted OpenAI-compatible one), over stdio
// and over Streamable HTTP (the listen stream an SSE reply of one POST): a `subscriptions/listen` naming a
// task it submitted is acknowledged for it and hears `notifications/tasks` working, then completed with the
// result `tasks/get` reads; a cancel is heard as cancelled; another principal's listen naming the task is
// acknowledged for nothing and hears nothing.

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type ScriptedServer, type ScriptStep, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { makeSandbox, repoRoot, type Sandbox, startHttpServerProcess, stdioEntry } from './fixtures.ts';
import { httpAsk, httpListen, type Message, meta, Queue, type Stream, SUB, TOKENS, type Who, WITH_TASKS } from './task-listen-wire.ts';

const answer = (text: string): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });

interface Wire {
  ask(method: string, params: Record<string, unknown>, who?: Who): Promise<Message>;
  listen(notifications: object, who?: Who): Promise<Stream>;
  close(): Promise<void>;
  /** A second principal to try (HTTP tokens; stdio has one user). */
  readonly other: boolean;
}

function scenario(name: string, open: (env: Record<string, string>, ws: string) => Promise<Wire>) {
  const t = suite(name);
  let box: Sandbox;
  let home: string;
  let model: ScriptedServer;
  let wire: Wire;
  const script: ScriptStep[] = [];

  t.before(async () => {
    box = await makeSandbox();
    home = await mkdtemp(path.join(os.tmpdir(), 'superpi-home-'));
    model = await startScriptedServer(script);
    wire = await open({ SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_API_KEY: 'sk-test', SUPERPI_HOME: home }, box.ws);
  });
  t.after(async () => {
    await wire?.close();
    await model?.close();
    await box?.cleanup();
    await rm(home, { recursive: true, force: true });
  });

  const submit = async (prompt: string): Promise<string> => {
    const created = await wire.ask('tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt } });
    assert.is(created.result?.resultType, 'task', JSON.stringify(created));
    return String(created.result?.taskId);
  };

  t('a listen naming the task hears it working, then completed with the result tasks/get reads; another principal hears nothing', async () => {
    let release!: () => void;
    script.push({ ...answer('All done.'), release: new Promise<void>((r) => (release = r)) });
    const taskId = await submit('Finish when told.');
    const stream = await wire.listen({ taskIds: [taskId] });
    const ack = await stream.next('the acknowledgment');
    assert.is(ack.method, 'notifications/subscriptions/acknowledged', JSON.stringify(ack));
    assert.equal(ack.params?.notifications, { taskIds: [taskId] });
    const subscription = (ack.params?._meta as Record<string, unknown>)[SUB];
    const first = await stream.next('the task\'s state at the acknowledgment');
    assert.equal([first.method, first.params?.taskId, first.params?.status], ['notifications/tasks', taskId, 'working'], JSON.stringify(first));
    assert.equal((first.params?._meta as Record<string, unknown>)[SUB], subscription, 'tagged with the listen id');

    const bobs = wire.other ? await wire.listen({ taskIds: [taskId] }, 'bob') : null;
    if (bobs) {
      const bobAck = await bobs.next('bob\'s acknowledgment');
      assert.equal(bobAck.params?.notifications, {}, 'another principal\'s task is not honoured');
    }

    release();
    const done = await stream.next('the completion');
    assert.equal([done.method, done.params?.taskId, done.params?.status], ['notifications/tasks', taskId, 'completed'], JSON.stringify(done));
    const polled = await wire.ask('tasks/get', { taskId });
    const { resultType: _r, _meta: _m, ...detailed } = polled.result ?? {};
    const { _meta: _s, ...notified } = done.params ?? {};
    assert.equal(notified, detailed, 'the notification carries the DetailedTask tasks/get answers');
    assert.is((done.params?.result as { content?: { text?: string }[] }).content?.[0]?.text, 'All done.');

    await new Promise((r) => setTimeout(r, 300));
    assert.equal(stream.waiting, [], 'each status once');
    if (bobs) assert.equal(bobs.waiting, [], 'another principal hears nothing');
    await stream.close();
    await bobs?.close();
  });

  t('a cancel is heard: cancelled, with why', async () => {
    script.push({ hang: true });
    const taskId = await submit('Think slowly.');
    const stream = await wire.listen({ taskIds: [taskId] });
    await stream.next('the acknowledgment');
    assert.is((await stream.next('the working state')).params?.status, 'working');
    const ack = await wire.ask('tasks/cancel', { taskId });
    assert.is(ack.result?.resultType, 'complete', JSON.stringify(ack));
    const cancelled = await stream.next('the cancel');
    assert.equal([cancelled.method, cancelled.params?.taskId, cancelled.params?.status], ['notifications/tasks', taskId, 'cancelled'], JSON.stringify(cancelled));
    assert.match(String(cancelled.params?.statusMessage), 'cancelled by the client (tasks/cancel)');
    await stream.close();
  });

  return t;
}

/** A stdio server spoken to line by line; notifications go to the listen stream whose id they carry. */
class RawStdio implements Wire {
  readonly other = false;
  readonly #child: ChildProcessWithoutNullStreams;
  #buf = '';
  #stderr = '';
  #next = 1;
  readonly #answers = new Map<unknown, (m: Message) => void>();
  readonly #streams = new Map<unknown, Queue>();

  constructor(ws: string, env: Record<string, string>) {
    this.#child = spawn(process.execPath, ['--import', 'tsx', stdioEntry, '--workspace', ws], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    this.#child.stderr.on('data', (d: Buffer) => (this.#stderr += d.toString()));
    this.#child.stdout.on('data', (d: Buffer) => {
      this.#buf += d.toString();
      let nl: number;
      while ((nl = this.#buf.indexOf('\n')) !== -1) {
        const msg = JSON.parse(this.#buf.slice(0, nl)) as Message;
        this.#buf = this.#buf.slice(nl + 1);
        if (msg.method === undefined) this.#answers.get(msg.id)?.(msg);
        else this.#streams.get((msg.params?._meta as Record<string, unknown> | undefined)?.[SUB])?.push(msg);
      }
    });
  }

  #send(id: number, method: string, params: Record<string, unknown>): void {
    this.#child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta(WITH_TASKS) } })}\n`);
  }

  ask = (method: string, params: Record<string, unknown>): Promise<Message> => {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${method}; stderr: ${this.#stderr}`)), 15_000);
      this.#answers.set(id, (m) => { clearTimeout(timer); this.#answers.delete(id); resolve(m); });
      this.#send(id, method, params);
    });
  };

  listen = async (notifications: object): Promise<Stream> => {
    const id = this.#next++;
    const stream = new Queue(async () => {
      this.#child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } })}\n`);
      this.#streams.delete(id);
    });
    this.#streams.set(id, stream);
    // An error answer (the listen refused) is a message of the stream too.
    this.#answers.set(id, (m) => stream.push(m));
    this.#send(id, 'subscriptions/listen', { notifications });
    return stream;
  };

  async close(): Promise<void> {
    this.#child.stdin.end();
    if (this.#child.exitCode === null) await new Promise((r) => this.#child.once('exit', r));
  }
}

scenario('notifications/tasks over stdio, raw JSON-RPC', async (env, ws) => new RawStdio(ws, env)).run();

scenario('notifications/tasks over Streamable HTTP, raw POSTs (the listen stream an SSE reply)', async (env, ws) => {
  const server = await startHttpServerProcess(ws, ['--threads', '1', '--tool-threads', '1'], { ...env, SUPERPI_TOKENS: `${TOKENS.alice}=alice,${TOKENS.bob}=bob` });
  return {
    other: true,
    ask: (method, params, who = 'alice') => httpAsk(server, method, params, who),
    listen: (notifications, who = 'alice') => httpListen(server, notifications, who),
    close: async () => { await server.stop(); },
  };
}).run();
