// The transport contract, in-process: the same scenarios against every transport over one SessionHost
// (the Application) — stdio over PassThrough streams, Streamable HTTP by calling the web-standard
// `handle(new Request(...))` directly, WebSocket over a real `ws` socket on 127.0.0.1 in this process.
// Each scenario is written once; the table of transports drives it. No child process is started
// (bash's own commands aside).

import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { TokenTable } from '../../src/auth/tokens.ts';
import { createLogger } from '../../src/log/logger.ts';
import { Application, type ApplicationOptions } from '../../src/server/application.ts';
import { DEFAULT_ALLOWED_HOSTS } from '../../src/limits.ts';
import { serveStdio } from '../../src/transports/stdio.ts';
import { StreamableHttp } from '../../src/transports/streamable-http.ts';
import { WebSocketTransport } from '../../src/transports/websocket.ts';
import { guarded } from '../hang-guard.ts';
import { allGone, atLeast, killLeftovers, uniqueSleep } from '../tools/processes.ts';

type Message = Record<string, unknown> & { id?: number | string; method?: string; error?: { code: number; data?: { reason?: string } }; result?: unknown };

const MAX_MESSAGE_BYTES = 1024 * 1024;
const logger = createLogger('error');
// The client declares elicitation: bash is `ask` under super-pi-code, and the person here allows every call.
const INITIALIZE = { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'contract', version: '1' } };

/** One client connection over some transport: what it sends, what it has received, how it ended. */
interface Wire {
  /** Sends one message (an initialize waits until the session exists). */
  send(message: object): Promise<void>;
  readonly received: Message[];
  /** How the transport shows the session has ended: stdio's outcome, HTTP's status for the id, the socket's close code. */
  ended(): Promise<string>;
  close(): Promise<void>;
}

interface TransportUnderTest {
  readonly name: string;
  open(app: Application): Promise<Wire>;
  /** What `ended()` says after the session was given up, and after the host closed it. */
  readonly gaveUp: string;
  readonly hostClosed: string;
}

/** The received messages, and a wait for the first one that matches. */
class Inbox {
  readonly received: Message[] = [];
  #waiters: { match: (m: Message) => boolean; resolve: (m: Message) => void }[] = [];
  /** Answers the server's questions (the person allows the call). */
  reply: (message: object) => void = () => undefined;

  push(message: Message): void {
    this.received.push(message);
    if (message.method === 'elicitation/create' && message.id !== undefined) {
      this.reply({ jsonrpc: '2.0', id: message.id, result: { action: 'accept', content: { allow: true } } });
    }
    for (const w of [...this.#waiters]) {
      if (!w.match(message)) continue;
      this.#waiters.splice(this.#waiters.indexOf(w), 1);
      w.resolve(message);
    }
  }

  next(match: (m: Message) => boolean, what: string): Promise<Message> {
    const seen = this.received.find(match);
    if (seen) return Promise.resolve(seen);
    return guarded(new Promise((resolve) => this.#waiters.push({ match, resolve })), what);
  }
}

const inboxes = new WeakMap<Wire, Inbox>();
const inboxOf = (wire: Wire): Inbox => inboxes.get(wire) as Inbox;
const answerTo = (wire: Wire, id: number | string): Promise<Message> =>
  inboxOf(wire).next((m) => m.id === id && m.method === undefined, `the answer to request ${JSON.stringify(id)}`);

const stdio: TransportUnderTest = {
  name: 'stdio',
  gaveUp: 'gave-up',
  hostClosed: 'ended',
  async open(app) {
    const input = new PassThrough();
    const output = new PassThrough();
    const inbox = new Inbox();
    let buffered = '';
    output.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) inbox.push(JSON.parse(line) as Message);
    });
    const served = serveStdio({ input, output, maxMessageBytes: MAX_MESSAGE_BYTES }, app);
    const wire: Wire = {
      received: inbox.received,
      send: async (message) => {
        input.write(`${JSON.stringify(message)}\n`);
      },
      ended: () => guarded(served, 'the stdio session ending'),
      close: async () => {
        input.end();
        await served;
      },
    };
    inboxes.set(wire, inbox);
    inbox.reply = (message) => void wire.send(message);
    return wire;
  },
};

/** Reads an SSE body, handing on each event's data. */
async function readEvents(body: ReadableStream<Uint8Array>, onData: (data: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  let text = '';
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read().catch(() => ({ done: true as const, value: undefined }));
    if (done) return;
    text += decoder.decode(value, { stream: true });
    const events = text.split('\n\n');
    text = events.pop() ?? '';
    for (const event of events) for (const line of event.split('\n')) if (line.startsWith('data: ')) onData(line.slice(6));
  }
}

const http: TransportUnderTest = {
  name: 'Streamable HTTP (web-standard handle)',
  gaveUp: '404',
  hostClosed: '404',
  async open(app) {
    const core = new StreamableHttp({ sessions: app, tokens: new TokenTable(), requireAuth: false, origin: { allowedHosts: DEFAULT_ALLOWED_HOSTS }, maxMessageBytes: MAX_MESSAGE_BYTES, logger });
    const inbox = new Inbox();
    const posts = new Set<AbortController>();
    let sessionId: string | null = null;
    const headers = (): Record<string, string> => ({
      host: 'localhost', accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': '2025-06-18',
      ...(sessionId === null ? {} : { 'mcp-session-id': sessionId }),
    });
    const post = (message: object, abort = new AbortController()) =>
      core.handle(new Request('http://localhost/mcp', { method: 'POST', headers: headers(), body: JSON.stringify(message), signal: abort.signal }));
    const read = async (response: Response): Promise<void> => {
      if (response.status === 202) return;
      const type = response.headers.get('content-type') ?? '';
      if (type.startsWith('text/event-stream') && response.body) return readEvents(response.body, (data) => inbox.push(JSON.parse(data) as Message));
      const parsed = JSON.parse(await response.text()) as Message | Message[];
      for (const m of Array.isArray(parsed) ? parsed : [parsed]) inbox.push(m);
    };
    const wire: Wire = {
      received: inbox.received,
      send: async (message) => {
        const abort = new AbortController();
        posts.add(abort);
        const responded = post(message, abort);
        if ((message as Message).method === 'initialize') {
          const response = await responded;
          sessionId = response.headers.get('mcp-session-id');
          await read(response);
          return;
        }
        void responded.then(read);
      },
      ended: async () => String((await post({ jsonrpc: '2.0', id: 'after-the-end', method: 'ping' })).status),
      close: async () => {
        for (const abort of posts) abort.abort();
        if (sessionId !== null) await core.handle(new Request('http://localhost/mcp', { method: 'DELETE', headers: headers() }));
      },
    };
    inboxes.set(wire, inbox);
    inbox.reply = (message) => void wire.send(message);
    return wire;
  },
};

const websocket: TransportUnderTest = {
  name: 'WebSocket (ws on 127.0.0.1)',
  gaveUp: 'close 1011',
  hostClosed: 'close 1001',
  async open(app) {
    const transport = new WebSocketTransport({ sessions: app, tokens: new TokenTable(), requireAuth: false, origin: { allowedHosts: DEFAULT_ALLOWED_HOSTS }, maxMessageBytes: MAX_MESSAGE_BYTES, logger });
    const server: Server = createServer((_req, res) => res.writeHead(404).end());
    server.on('upgrade', (req, socket, head: Buffer) => transport.upgrade(req, socket, head));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const socket = new WebSocket(`ws://127.0.0.1:${port}/mcp`, 'mcp');
    const inbox = new Inbox();
    socket.on('message', (data) => inbox.push(JSON.parse(String(data)) as Message));
    const closed = new Promise<string>((resolve) => socket.once('close', (code) => resolve(`close ${code}`)));
    await guarded(new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    }), 'the WebSocket opening');
    const wire: Wire = {
      received: inbox.received,
      send: async (message) => {
        socket.send(JSON.stringify(message));
      },
      ended: () => guarded(closed, 'the WebSocket closing'),
      close: async () => {
        socket.close();
        await guarded(closed, 'the WebSocket closing');
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      },
    };
    inboxes.set(wire, inbox);
    inbox.reply = (message) => void wire.send(message);
    return wire;
  },
};

const TRANSPORTS: readonly TransportUnderTest[] = [stdio, http, websocket];

let workspace: string;
const apps: Application[] = [];

async function startApp(extra: Partial<ApplicationOptions> = {}): Promise<Application> {
  workspace ??= await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-transport-contract-')));
  await writeFile(path.join(workspace, 'a.txt'), 'hello from the contract\n');
  const app = await Application.start({
    workspace, harness: 'super-pi-code', pageSize: 50, toolTimeoutMs: 30_000, threads: 0, toolThreads: 1,
    chaos: {}, logger, serverVersion: 'test', onGiveUp: (m) => { throw new Error(`the tree gave up: ${m}`); }, metrics: false,
    ...extra,
  });
  apps.push(app);
  return app;
}

let shared: Application | null = null;
// Remote callers here are anonymous: bash and harness_task are theirs (and listed) only with the operator's opt-ins.
const sharedApp = async (): Promise<Application> => (shared ??= await startApp({ allowAnonymousWrites: true, allowAnonymousTasks: true }));

/** A wire with an initialized session. */
async function initialized(transport: TransportUnderTest, app: Application): Promise<Wire> {
  const wire = await transport.open(app);
  await wire.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: INITIALIZE });
  assert.ok((await answerTo(wire, 'init')).result, 'initialize answered with a result');
  await wire.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return wire;
}

const call = (id: number, name: string, args: object, meta?: object) =>
  ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) } });
const cancel = (id: number) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'the test cancelled it' } });

for (const transport of TRANSPORTS) {
  test(`${transport.name}: initialize, tools/list and a read are answered`, async () => {
    const wire = await initialized(transport, await sharedApp());
    await wire.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const tools = (await answerTo(wire, 1)).result as { tools: { name: string }[] };
    assert.equal(tools.tools.map((t) => t.name), ['read', 'write', 'edit', 'bash', 'grep', 'find', 'ls', 'harness_task']);
    await wire.send(call(2, 'read', { path: 'a.txt' }));
    const read = (await answerTo(wire, 2)).result as { content: { text: string }[] };
    assert.match(read.content[0]?.text ?? '', /hello from the contract/);
    await wire.close();
  });

  test(`${transport.name}: a notification gets no answer`, async () => {
    const wire = await initialized(transport, await sharedApp());
    const before = wire.received.length;
    await wire.send({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
    await wire.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
    await answerTo(wire, 3);
    // Everything received since the notification answers the ping: nothing answered the notification.
    assert.equal(wire.received.slice(before).map((m) => m.id), [3]);
    await wire.close();
  });

  test(`${transport.name}: a request id reused while its request is in flight is refused with -32600`, async () => {
    const wire = await initialized(transport, await sharedApp());
    const sleep = uniqueSleep();
    try {
      await wire.send(call(4, 'bash', { command: `sleep ${sleep}` }));
      await atLeast(sleep, 1);
      await wire.send({ jsonrpc: '2.0', id: 4, method: 'ping' });
      const refused = await inboxOf(wire).next((m) => m.id === 4 && m.error !== undefined, 'the reused id refused');
      assert.is(refused.error?.code, -32600);
      await wire.send(cancel(4));
      assert.ok(await allGone(sleep), 'the first request (its command) is cancelled after');
    } finally {
      killLeftovers(sleep);
      await wire.close();
    }
  });

  test(`${transport.name}: a call's progress (its _meta.progressToken) reaches the client before its answer`, async () => {
    const wire = await initialized(transport, await sharedApp());
    await wire.send(call(5, 'bash', { command: 'for i in 1 2 3; do echo tick $i; sleep 0.2; done' }, { progressToken: 'contract-progress' }));
    const answer = await answerTo(wire, 5);
    assert.match(JSON.stringify(answer.result), /tick 3/);
    const progress = wire.received.findIndex((m) => m.method === 'notifications/progress' && (m.params as { progressToken?: unknown }).progressToken === 'contract-progress');
    assert.ok(progress !== -1, 'a progress notification with the token arrived');
    assert.ok(progress < wire.received.indexOf(answer), 'before the answer');
    await wire.close();
  });

  test(`${transport.name}: notifications/cancelled stops a bash call: no answer, the command is gone, the session goes on`, async () => {
    const wire = await initialized(transport, await sharedApp());
    const sleep = uniqueSleep();
    try {
      await wire.send(call(6, 'bash', { command: `sleep ${sleep}` }));
      await atLeast(sleep, 1);
      await wire.send(cancel(6));
      assert.ok(await allGone(sleep), 'the command was killed');
      await wire.send({ jsonrpc: '2.0', id: 7, method: 'ping' });
      await answerTo(wire, 7);
      // The spec: a cancelled request is not answered.
      assert.is(wire.received.filter((m) => m.id === 6).length, 0);
    } finally {
      killLeftovers(sleep);
      await wire.close();
    }
  });

  test(`${transport.name}: a given-up session answers what is in flight with -32010 session-given-up and ends (${transport.gaveUp})`, async () => {
    // Every message crashes the connection actor, and the session's supervisor tolerates no restart:
    // the initialize is in flight when the session is given up.
    const doomed = await startApp({ chaos: { crashActorProbability: 1 }, intensities: { root: { maxRestarts: 3, periodMs: 5000 }, schedulers: { maxRestarts: 10, periodMs: 2000 }, session: { maxRestarts: 0, periodMs: 1000 }, task: { maxRestarts: 10, periodMs: 10_000 } } });
    const wire = await transport.open(doomed);
    await wire.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: INITIALIZE });
    const answer = await answerTo(wire, 'init');
    assert.is(answer.error?.code, -32010);
    assert.is(answer.error?.data?.reason, 'session-given-up');
    assert.is(await wire.ended(), transport.gaveUp);
    assert.is(doomed.registry.size, 0, 'the session left the registry');
    await wire.close();
    await doomed.stop();
  });

  test(`${transport.name}: closing the host ends every session (${transport.hostClosed})`, async () => {
    const app = await startApp();
    const wire = await initialized(transport, app);
    assert.is(app.registry.size, 1);
    await app.stop();
    assert.is(app.registry.size, 0);
    assert.is(await wire.ended(), transport.hostClosed);
    await wire.close();
  });
}

test.after(async () => {
  for (const app of apps) await app.stop();
  if (workspace) await rm(workspace, { recursive: true, force: true });
});

test.run();
