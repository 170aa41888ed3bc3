// End to end with raw JSON-RPC: a 2026-07-28 client (no initialize, context in every request's _meta)
// over stdio, interleaved with a legacy session on the same process.

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSandbox, repoRoot, type Sandbox, stdioEntry } from './fixtures.ts';

type Message = Record<string, unknown> & { id?: unknown; result?: Record<string, unknown>; error?: { code: number } };

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw-modern', version: '1' },
};
const modern = (id: number | string, method: string, params: Record<string, unknown> = {}) =>
  ({ jsonrpc: '2.0', id, method, params: { ...params, _meta: META } });

/** A stdio server spoken to line by line; `ask` sends one request and waits for the answer with its id. */
class RawStdio {
  readonly child: ChildProcessWithoutNullStreams;
  readonly messages: Message[] = [];
  #buf = '';
  #stderr = '';
  #waiters = new Map<unknown, (m: Message) => void>();

  constructor(ws: string) {
    this.child = spawn(process.execPath, ['--import', 'tsx', stdioEntry, '--workspace', ws], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr.on('data', (d: Buffer) => (this.#stderr += d.toString()));
    this.child.stdout.on('data', (d: Buffer) => {
      this.#buf += d.toString();
      let nl: number;
      while ((nl = this.#buf.indexOf('\n')) !== -1) {
        const msg = JSON.parse(this.#buf.slice(0, nl)) as Message;
        this.#buf = this.#buf.slice(nl + 1);
        this.messages.push(msg);
        if (msg.method === undefined) this.#waiters.get(msg.id)?.(msg);
      }
    });
  }

  ask(message: { id: unknown }): Promise<Message> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${JSON.stringify(message)}; stderr: ${this.#stderr}`)), 15_000);
      this.#waiters.set(message.id, (m) => { clearTimeout(timer); this.#waiters.delete(message.id); resolve(m); });
      this.child.stdin.write(`${JSON.stringify(message)}\n`);
    });
  }

  async close(): Promise<void> {
    this.child.stdin.end();
    if (this.child.exitCode === null) await new Promise((r) => this.child.once('exit', r));
  }
}

const stdio = suite('2026-07-28 over stdio, raw JSON-RPC');
let box: Sandbox;
let s: RawStdio;

stdio.before(async () => {
  box = await makeSandbox();
  s = new RawStdio(box.ws);
});
stdio.after(async () => {
  await s.close();
  await box.cleanup();
});

stdio('server/discover answers before any initialize, naming both eras', async () => {
  const m = await s.ask({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: META } });
  assert.is(m.result?.resultType, 'complete');
  assert.equal((m.result?.supportedVersions as string[]).slice(0, 2), ['2026-07-28', '2025-11-25']);
});

stdio('tools/list and tools/call read work with no session', async () => {
  const list = await s.ask(modern(2, 'tools/list'));
  assert.ok((list.result?.tools as { name: string }[]).some((t) => t.name === 'read'));
  assert.is(list.result?.cacheScope, 'private');
  const read = await s.ask(modern(3, 'tools/call', { name: 'read', arguments: { path: 'README.md' } }));
  assert.is(read.result?.resultType, 'complete');
  assert.match(JSON.stringify(read.result?.content), /Demo project/);
});

stdio('a legacy initialize after modern requests still opens the legacy session, and both keep working', async () => {
  const legacyBefore = await s.ask({ jsonrpc: '2.0', id: 4, method: 'tools/list' });
  assert.is(legacyBefore.error?.code, -32600);
  const init = await s.ask({ jsonrpc: '2.0', id: 5, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } } });
  assert.is((init.result as { protocolVersion: string }).protocolVersion, '2025-06-18');
  s.child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  const legacy = await s.ask({ jsonrpc: '2.0', id: 6, method: 'tools/list' });
  assert.is(legacy.result?.resultType, undefined);
  const again = await s.ask(modern(7, 'resources/read', { uri: 'superpi://nowhere' }));
  assert.is(again.error?.code, -32602);
  const versionWrong = await s.ask({ jsonrpc: '2.0', id: 8, method: 'tools/list', params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2030-01-01' } } });
  assert.is(versionWrong.error?.code, -32022);
});

stdio.run();
