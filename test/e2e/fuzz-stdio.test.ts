// Fuzz, stdio: 10,000 generated lines (valid requests with random params, broken JSON, wrong types, huge
// ids, bounded nesting, batches, unknown and Object.prototype method names, notifications, responses,
// bytes that are not UTF-8), a third of them 2026-07-28 requests interleaved with the 2025 ones (fuzz-modern.ts),
// into a real `super-pi --stdio` process. Its stdout stays protocol only (every line a JSON-RPC message),
// no request is aborted by a crash, every modern request is answered once with a result or an error
// echoing its id, it then serves a fresh modern client (server/discover, a read) and initialize,
// tools/list and a read normally, its RSS stays bounded, and it exits 0 when its input closes.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSandbox, repoRoot } from './fixtures.ts';
import { binEntry, FUZZ_MESSAGES, FUZZ_RSS_LIMIT_BYTES, FUZZ_SEED, FuzzGenerator, Rng, rssOf, stopChild } from './fuzz.ts';
import { ModernAnswers, modernMeta } from './fuzz-modern.ts';

const REPLY_DEADLINE_MS = 30_000;

type Message = { jsonrpc?: unknown; id?: unknown; result?: unknown; error?: { code: number; message: string }; method?: unknown };

test(`stdio: ${FUZZ_MESSAGES} generated lines; stdout stays JSON-RPC; then initialize, tools/list and a read are served and RSS < ${FUZZ_RSS_LIMIT_BYTES / 2 ** 20} MB (seed ${FUZZ_SEED})`, async () => {
  const box = await makeSandbox();
  const child = spawn(process.execPath, [binEntry, '--stdio', '--workspace', box.ws, '--log-level', 'error'], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
  const notProtocol: string[] = [];
  const aborted: string[] = [];
  const waiting = new Map<string, (m: Message) => void>();
  const modern = new ModernAnswers();
  let pending = '';
  child.stdout.on('data', (d: Buffer) => {
    pending += d.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() as string;
    for (const line of lines) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        notProtocol.push(line.slice(0, 200));
        continue;
      }
      for (const m of (Array.isArray(parsed) ? parsed : [parsed]) as Message[]) {
        if (typeof m !== 'object' || m === null || m.jsonrpc !== '2.0') notProtocol.push(line.slice(0, 200));
        // -32010: the session's actor died under the request. Without fault injection, that is a bug.
        else if (m.error?.code === -32010) aborted.push(line.slice(0, 300));
        else {
          modern.seen(m);
          if (typeof m.id === 'string' && m.method === undefined) waiting.get(m.id)?.(m);
        }
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const write = async (chunk: string | Buffer) => {
    if (!child.stdin.write(chunk)) await once(child.stdin, 'drain');
  };
  const request = async (id: string, method: string, params: unknown = {}): Promise<Message> => {
    const answer = new Promise<Message>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no reply to ${id} within ${REPLY_DEADLINE_MS} ms; stderr: ${stderr.slice(-2000)}`)), REPLY_DEADLINE_MS);
      waiting.set(id, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      void exited.then((code) => reject(new Error(`the server exited with ${code}; stderr: ${stderr.slice(-2000)}`)));
    });
    await write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    return answer;
  };
  try {
    const cases = new FuzzGenerator(new Rng(FUZZ_SEED), { bytes: true, cancelUnusedIdsOnly: false, cancelListens: true });
    for (let i = 0; i < FUZZ_MESSAGES; i++) {
      const c = cases.next();
      if (c.kind === 'text') modern.sent(c);
      await write(c.kind === 'text' ? `${c.text}\n` : Buffer.concat([c.bytes, Buffer.from('\n')]));
    }
    // Streams still open are cancelled, as a host does before it closes: else the exit waits out its grace for them.
    for (const c of cases.finish()) {
      if (c.kind === 'text') modern.sent(c);
      await write(`${c.kind === 'text' ? c.text : ''}\n`);
    }
    // Lines are handled in order: the answer to this ping comes after everything before it was read.
    const last = await request('fuzz-last', 'ping');
    assert.equal(last.result, {}, JSON.stringify(last));
    assert.equal(notProtocol.slice(0, 3), [], `${notProtocol.length} stdout lines were not JSON-RPC messages`);
    assert.equal(aborted.slice(0, 3), [], `${aborted.length} requests were aborted by actor crashes`);
    // Tool calls and store reads answer after the ping: every modern request's answer, within a deadline.
    const owed = await modern.settled();
    assert.equal(owed.slice(0, 5), [], `${owed.length} 2026-07-28 requests were not answered; stderr: ${stderr.slice(-2000)}`);
    assert.equal(modern.problems.slice(0, 5), [], `${modern.problems.length} answers to 2026-07-28 requests were malformed`);
    // The run reached the modern era's handlers, not only its refusals (a few thousand modern requests per run).
    const outcomes = JSON.stringify([...modern.outcomes]);
    console.log(`seed ${FUZZ_SEED}: 2026-07-28 answers ${outcomes}`);
    assert.ok((modern.outcomes.get('result') ?? 0) > 500 && (modern.outcomes.get('error') ?? 0) > 500 && (modern.outcomes.get('acknowledged') ?? 0) > 10, outcomes);

    // A fresh 2026-07-28 client: server/discover, then a read.
    const discover = await request('fresh-discover', 'server/discover', { _meta: modernMeta() }) as { result: { supportedVersions: string[] } };
    assert.ok(discover.result.supportedVersions.includes('2026-07-28'), JSON.stringify(discover));
    const modernRead = await request('fresh-modern-read', 'tools/call', { name: 'read', arguments: { path: 'README.md' }, _meta: modernMeta() });
    assert.match(JSON.stringify(modernRead.result), /Demo project/);
    assert.match(JSON.stringify(modernRead.result), /"resultType":"complete"/);

    // Served normally: initialize (answered; "already initialized" if a fuzz line initialized the session),
    // tools/list and a read.
    const init = await request('fresh-init', 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fresh', version: '1' } });
    assert.ok(init.result !== undefined || /already initialized/.test(init.error?.message ?? ''), JSON.stringify(init));
    const list = await request('fresh-list', 'tools/list') as { result: { tools: { name: string }[] } };
    assert.ok(list.result.tools.some((t) => t.name === 'read'), JSON.stringify(list));
    const read = await request('fresh-read', 'tools/call', { name: 'read', arguments: { path: 'README.md' } });
    assert.match(JSON.stringify(read.result), /Demo project/);

    const rss = await rssOf(child.pid as number);
    assert.ok(rss < FUZZ_RSS_LIMIT_BYTES, `RSS ${Math.round(rss / 2 ** 20)} MB`);
    child.stdin.end();
    assert.is(await exited, 0, `exit code after input closed; stderr: ${stderr.slice(-2000)}`);
  } finally {
    await stopChild(child);
    await box.cleanup();
  }
});

test.run();
