// Threat model, protocol abuse (issue 10, items 7-10). Rule: no message can crash, stall or bloat a
// session — method names are looked up in Maps (an Object.prototype name is just an unknown method),
// every message is bounded in nesting (MAX_JSON_DEPTH), every batch in length (MAX_BATCH_LENGTH) and
// handled in slices, and what a session keeps is bounded (MAX_CLIENT_CAPABILITIES_BYTES, ...); each
// refusal names its limit and the server goes on serving.
// Caller classes: every caller that can send protocol messages — the local stdio user, token principals
// and anonymous remote callers (the same pure core serves every transport). Exercised here through a real
// stdio server process; workspace content plays no part.

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_BATCH_LENGTH, MAX_CLIENT_CAPABILITIES_BYTES, MAX_JSON_DEPTH } from '../../src/limits.ts';
import { makeSandbox, repoRoot, type Sandbox, stdioEntry } from '../e2e/fixtures.ts';

type Message = Record<string, unknown> & { id?: unknown; result?: unknown; error?: { code: number; message: string } };

/** A stdio server driven with raw lines, its stdout read as JSON lines. */
class RawStdio {
  readonly child: ChildProcessWithoutNullStreams;
  readonly messages: Message[] = [];
  #stderr = '';
  #buffer = '';
  #waiters: (() => void)[] = [];

  constructor(ws: string) {
    this.child = spawn(process.execPath, ['--import', 'tsx', stdioEntry, '--workspace', ws], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr.on('data', (d: Buffer) => { this.#stderr += d.toString(); });
    this.child.stdout.on('data', (d: Buffer) => {
      this.#buffer += d.toString();
      for (let nl = this.#buffer.indexOf('\n'); nl !== -1; nl = this.#buffer.indexOf('\n')) {
        this.messages.push(JSON.parse(this.#buffer.slice(0, nl)) as Message);
        this.#buffer = this.#buffer.slice(nl + 1);
      }
      for (const w of this.#waiters.splice(0)) w();
    });
  }

  get stderr(): string {
    return this.#stderr;
  }

  send(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  /** The first message (from the start) that matches; waits for it up to `ms`. */
  async next(match: (m: Message) => boolean, ms = 20_000): Promise<Message> {
    const until = Date.now() + ms;
    for (;;) {
      const found = this.messages.find(match);
      if (found) return found;
      if (this.child.exitCode !== null) throw new Error(`the server exited (${this.child.exitCode}); stderr: ${this.#stderr}`);
      const left = until - Date.now();
      if (left <= 0) throw new Error(`no matching message within ${ms} ms; stderr: ${this.#stderr}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 500));
        this.#waiters.push(() => { clearTimeout(timer); resolve(); });
      });
    }
  }

  async ping(id: string): Promise<void> {
    this.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }));
    assert.equal((await this.next((m) => m.id === id)).result, {});
  }

  async initialize(id: string, version = '2025-03-26', capabilities = '{}'): Promise<Message> {
    this.send(`{"jsonrpc":"2.0","id":"${id}","method":"initialize","params":{"protocolVersion":"${version}","capabilities":${capabilities},"clientInfo":{"name":"security","version":"1"}}}`);
    return this.next((m) => m.id === id);
  }

  /** Ends stdin and returns the exit code: a server that survived everything exits 0. */
  async close(): Promise<number | null> {
    if (this.child.exitCode === null) {
      const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
      this.child.stdin.end();
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    return this.child.exitCode;
  }
}

const limits = suite('protocol limits over a real stdio server');
let box: Sandbox;
const servers: RawStdio[] = [];
const start = (): RawStdio => {
  const s = new RawStdio(box.ws);
  servers.push(s);
  return s;
};

limits.before(async () => {
  box = await makeSandbox();
});
limits.after.each(async () => {
  for (const s of servers.splice(0)) if (s.child.exitCode === null) { s.child.kill('SIGKILL'); await new Promise((r) => s.child.once('exit', r)); }
});
limits.after(async () => {
  await box.cleanup();
});

const prototypeMethods = ['toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', 'propertyIsEnumerable',
  'toLocaleString', '__defineGetter__', '__defineSetter__', '__lookupGetter__', '__lookupSetter__', 'toString', '__proto__', 'constructor'];

limits('15 Object.prototype method names in a row are each -32601; the server answers ping and exits 0', async () => {
  const s = start();
  assert.ok((await s.initialize('init')).result);
  prototypeMethods.forEach((method, i) => s.send(JSON.stringify({ jsonrpc: '2.0', id: `p${i}`, method })));
  for (const [i, method] of prototypeMethods.entries()) {
    const reply = await s.next((m) => m.id === `p${i}`);
    assert.is(reply.error?.code, -32601, method);
    assert.is(reply.error?.message, `Method not found: ${method}`);
  }
  await s.ping('after');
  assert.is(await s.close(), 0);
});

limits('a 5,000-level nested initialize is -32602 naming MAX_JSON_DEPTH; the server lives and the next initialize works', async () => {
  const s = start();
  const deep = `${'{"x":'.repeat(4999)}{}${'}'.repeat(4999)}`;
  const refused = await s.initialize('deep', '2025-06-18', deep);
  assert.is(refused.error?.code, -32602);
  assert.match(refused.error?.message ?? '', `MAX_JSON_DEPTH (${MAX_JSON_DEPTH})`);
  const accepted = await s.initialize('init');
  assert.is((accepted.result as { protocolVersion: string }).protocolVersion, '2025-03-26');
  await s.ping('after');
  assert.not.match(s.stderr, /connection actor exited/);
  assert.is(await s.close(), 0);
});

limits('4 MB of capabilities are refused naming MAX_CLIENT_CAPABILITIES_BYTES; a normal initialize follows', async () => {
  const s = start();
  const refused = await s.initialize('big', '2025-03-26', `{"experimental":{"blob":"${'x'.repeat(4_000_000)}"}}`);
  assert.is(refused.error?.code, -32602);
  assert.match(refused.error?.message ?? '', `MAX_CLIENT_CAPABILITIES_BYTES (${MAX_CLIENT_CAPABILITIES_BYTES})`);
  assert.ok((await s.initialize('init')).result);
  await s.ping('after');
  assert.is(await s.close(), 0);
});

limits('a batch of 30,000 pings under 2025-03-26 is one -32600 with id null naming MAX_BATCH_LENGTH; the server goes on', async () => {
  const s = start();
  assert.ok((await s.initialize('init')).result);
  s.send(JSON.stringify(Array.from({ length: 30_000 }, (_, i) => ({ jsonrpc: '2.0', id: `b${i}`, method: 'ping' }))));
  const refused = await s.next((m) => m.id === null);
  assert.is(refused.error?.code, -32600);
  assert.match(refused.error?.message ?? '', `MAX_BATCH_LENGTH (${MAX_BATCH_LENGTH})`);
  await s.ping('after');
  assert.not.ok(s.messages.some((m) => typeof m.id === 'string' && m.id.startsWith('b')), 'no element of the refused batch was answered');
  assert.is(await s.close(), 0);
});

limits('a batch of MAX_BATCH_LENGTH pings is answered in full, and the server stays responsive', async () => {
  const s = start();
  assert.ok((await s.initialize('init')).result);
  s.send(JSON.stringify(Array.from({ length: MAX_BATCH_LENGTH }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }))));
  await s.ping('after');
  await s.next((m) => m.id === MAX_BATCH_LENGTH - 1);
  const answered = s.messages.filter((m) => typeof m.id === 'number');
  assert.equal(answered.map((m) => m.id), Array.from({ length: MAX_BATCH_LENGTH }, (_, i) => i));
  assert.ok(answered.every((m) => JSON.stringify(m.result) === '{}'));
  assert.not.match(s.stderr, /heartbeat|connection actor exited/);
  assert.is(await s.close(), 0);
});

limits.run();
