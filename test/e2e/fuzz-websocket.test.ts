// Fuzz, WebSocket: 10,000 generated frames (valid requests with random params, broken JSON, wrong types,
// huge ids, bounded nesting, batches, unknown and Object.prototype method names, notifications, responses,
// text frames that are not UTF-8), a third of them 2026-07-28 requests interleaved with the 2025 ones on
// the same socket (fuzz-modern.ts), over a series of sockets to a real server process. Every modern
// request is answered once with a result or an error echoing its id (a listen: its acknowledgment, or
// it was cancelled), every socket's last ping is answered unless the socket was closed for invalid
// UTF-8; afterwards a fresh modern client (server/discover, a read) and a fresh 2025 client are served
// normally and the RSS stays bounded.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { UNCAUGHT_MESSAGE } from '../../src/cli/last-resort.ts';
import { makeSandbox } from './fixtures.ts';
import { FUZZ_MESSAGES, FUZZ_RSS_LIMIT_BYTES, FUZZ_SEED, type FuzzCase, FuzzGenerator, Rng, rssOf, startFuzzServer } from './fuzz.ts';
import { ModernAnswers, modernMeta } from './fuzz-modern.ts';

/** Frames per socket before it says goodbye and the next one opens. */
const FRAMES_PER_SOCKET = 500;
/** Sockets open at once. */
const CONCURRENCY = 4;
const REPLY_DEADLINE_MS = 30_000;
const INVALID_UTF8 = Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]);

type Message = { id?: unknown; result?: unknown; error?: { code: number } };

/** Requests aborted because an actor crashed, across every socket of the run. */
const aborted: string[] = [];

/** Malformed or missing answers to 2026-07-28 requests, across every socket of the run. */
const modernProblems: string[] = [];

/** An open socket, the answers its modern requests are owed, and a way to wait for the reply to one id. */
async function connect(url: string): Promise<{ ws: WebSocket; modern: ModernAnswers; reply(id: string): Promise<Message | 'closed'> }> {
  const modern = new ModernAnswers();
  const ws = new WebSocket(url, ['mcp']);
  const waiting = new Map<string, (m: Message | 'closed') => void>();
  ws.on('message', (data) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data.toString());
    } catch (err) {
      throw new Error(`the server sent a frame that is not JSON: ${data.toString().slice(0, 200)} (${(err as Error).message})`);
    }
    for (const m of (Array.isArray(parsed) ? parsed : [parsed]) as Message[]) {
      // -32010: the session's actor died under the request. Without fault injection, that is a bug.
      if (m.error?.code === -32010) aborted.push(JSON.stringify(m).slice(0, 300));
      modern.seen(m);
      if (typeof m.id === 'string') waiting.get(m.id)?.(m);
    }
  });
  ws.on('close', () => { for (const done of waiting.values()) done('closed'); });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return {
    ws,
    modern,
    reply: (id) => new Promise((resolve, reject) => {
      if (ws.readyState !== ws.OPEN) return resolve('closed');
      const timer = setTimeout(() => reject(new Error(`no reply to ${id} within ${REPLY_DEADLINE_MS} ms`)), REPLY_DEADLINE_MS);
      waiting.set(id, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
    }),
  };
}

const initialize = (id: string, version: string) => JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } });

test(`WebSocket: ${FUZZ_MESSAGES} generated frames; every socket's last ping is answered; then a fresh client is served and RSS < ${FUZZ_RSS_LIMIT_BYTES / 2 ** 20} MB (seed ${FUZZ_SEED})`, async () => {
  const box = await makeSandbox();
  const server = await startFuzzServer(box.ws);
  const wsUrl = server.url.replace(/^http/, 'ws');
  try {
    const generator = new FuzzGenerator(new Rng(FUZZ_SEED), { bytes: false, cancelUnusedIdsOnly: false, cancelListens: true });
    const batches = Array.from({ length: Math.ceil(FUZZ_MESSAGES / FRAMES_PER_SOCKET) }, () =>
      Array.from({ length: FRAMES_PER_SOCKET }, () => generator.next()));
    const outcomes = new Map<string, number>();
    const versions = ['2025-06-18', '2025-03-26', '2024-11-05'];
    let closedForBytes = 0;
    let next = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < batches.length) {
        const n = next++;
        const frames = batches[n] as FuzzCase[];
        const { ws, modern, reply } = await connect(wsUrl);
        // Every fifth socket is never initialized by the test: its 2026-07-28 requests need no handshake,
        // and its 2025 ones meet a session before (or after a fuzzed) initialize.
        if (n % 5 !== 4) {
          ws.send(initialize('fuzz-init', versions[n % versions.length] as string));
          const init = await reply('fuzz-init');
          assert.ok(init !== 'closed' && init.result, `socket ${n} initialized: ${JSON.stringify(init)}`);
          ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
        }
        for (const c of frames) {
          if (c.kind === 'text') modern.sent(c);
          ws.send(c.kind === 'text' ? c.text : c.bytes);
        }
        // Before the socket ends (a close drops what is in flight): every modern request answered.
        for (const id of await modern.settled()) modernProblems.push(`socket ${n}: no answer to ${id}`);
        modernProblems.push(...modern.problems);
        for (const [k, v] of modern.outcomes) outcomes.set(k, (outcomes.get(k) ?? 0) + v);
        if (n % 4 === 3) {
          // A text frame that is not UTF-8 ends every fourth socket: the server closes it (1007), nothing else.
          const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
          ws.send(INVALID_UTF8, { binary: false });
          assert.is(await closed, 1007);
          closedForBytes++;
        } else {
          ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'fuzz-last', method: 'ping' }));
          const answer = await reply('fuzz-last');
          assert.ok(answer !== 'closed' && answer.result, `socket ${n}'s last ping was answered: ${JSON.stringify(answer)}`);
        }
        ws.close();
      }
    }));

    assert.equal(aborted.slice(0, 3), [], `${aborted.length} requests were aborted by actor crashes`);
    assert.equal(modernProblems.slice(0, 5), [], `${modernProblems.length} 2026-07-28 requests were not answered, or answered malformed`);
    assert.ok((outcomes.get('result') ?? 0) > 500 && (outcomes.get('error') ?? 0) > 500 && (outcomes.get('acknowledged') ?? 0) > 10, JSON.stringify([...outcomes]));

    // A fresh 2026-07-28 client (no initialize): server/discover, then a read.
    const fresh = await connect(wsUrl);
    fresh.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'discover', method: 'server/discover', params: { _meta: modernMeta() } }));
    const discover = await fresh.reply('discover') as { result: { supportedVersions: string[] } };
    assert.ok(discover.result.supportedVersions.includes('2026-07-28'), JSON.stringify(discover));
    fresh.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'read', method: 'tools/call', params: { name: 'read', arguments: { path: 'README.md' }, _meta: modernMeta() } }));
    assert.match(JSON.stringify((await fresh.reply('read') as Message).result), /Demo project/);
    fresh.ws.close();

    // A fresh 2025 client: initialize, tools/list, a read.
    const { ws, reply } = await connect(wsUrl);
    ws.send(initialize('init', '2025-06-18'));
    assert.ok((await reply('init')) !== 'closed');
    ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'list', method: 'tools/list' }));
    const list = await reply('list') as { result: { tools: { name: string }[] } };
    assert.ok(list.result.tools.some((t) => t.name === 'read'));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'read', method: 'tools/call', params: { name: 'read', arguments: { path: 'README.md' } } }));
    assert.match(JSON.stringify((await reply('read') as Message).result), /Demo project/);
    ws.close();

    assert.not.ok(server.stderr().includes(UNCAUGHT_MESSAGE), 'no fuzzed message reached the uncaught-failure policy');
    const rss = await rssOf(server.child.pid as number);
    assert.ok(rss < FUZZ_RSS_LIMIT_BYTES, `RSS ${Math.round(rss / 2 ** 20)} MB`);
    assert.ok(closedForBytes > 0 && closedForBytes < batches.length);
  } finally {
    await server.stop();
    await box.cleanup();
  }
});

test.run();
