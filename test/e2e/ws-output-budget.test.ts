// The node's budget for unread output (--max-node-output-backlog-bytes) over real WebSockets: several
// clients that send many reads of a large file and read nothing hold more between them than the budget;
// the server closes the one holding the most (a warning names its principal), never a client that reads
// its answers nor a small non-reader, and the total it counted stays within the budget plus one message.
// Without the budget each socket is bounded only by --max-output-backlog-bytes (64 MiB), and their sum by nothing.

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';
import { guarded, pollUntil } from '../hang-guard.ts';

const BUDGET = 4 * 1024 * 1024;
const BIG_READS = 100;
const WARNING = 'WebSocket closed: the node holds more unread output than its budget';
const TOKENS = { reader: 'reader-token-0123456789abcdef', small: 'small-token-0123456789abcdefgh', big1: 'big1-token-0123456789abcdefghi', big2: 'big2-token-0123456789abcdefghi', big3: 'big3-token-0123456789abcdefghi' };

const e2e = suite('the node output budget closes the WebSocket holding the most unread output');
let box: Sandbox;
let server: RunningServer;

e2e.before(async () => {
  box = await makeSandbox();
  // 300 KB of lines: a `read` answers with about 100 KB of it.
  await writeFile(path.join(box.ws, 'big.txt'), Array.from({ length: 6000 }, (_, i) => `line ${String(i).padStart(5, '0')} ${'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL'}`).join('\n') + '\n');
  const tokens = Object.entries(TOKENS).map(([name, token]) => `${token}=${name}`).join(',');
  server = await startHttpServerProcess(box.ws, ['--max-node-output-backlog-bytes', String(BUDGET)], { SUPERPI_TOKENS: tokens });
});
e2e.after(async () => {
  await server?.stop();
  await box?.cleanup();
});

interface Client { readonly ws: WebSocket; readonly replies: Map<string, string>; readonly closed: Promise<number>; isClosed: boolean }

/** An initialized WebSocket session of `principal`; every reply kept by id, as text. */
async function open(principal: keyof typeof TOKENS): Promise<Client> {
  const ws = new WebSocket(server.wsUrl, 'mcp', { headers: { authorization: `Bearer ${TOKENS[principal]}` } });
  ws.on('error', () => {});
  const replies = new Map<string, string>();
  ws.on('message', (data) => {
    const text = String(data);
    const id = (JSON.parse(text) as { id?: unknown }).id;
    if (id !== undefined) replies.set(String(id), text);
  });
  const client: Client = { ws, replies, closed: new Promise<number>((resolve) => ws.once('close', (code) => resolve(code))), isClosed: false };
  void client.closed.then(() => (client.isClosed = true));
  await guarded(new Promise<void>((resolve, reject) => ws.once('open', () => resolve()).once('error', reject)), `${principal}'s socket opening`);
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: principal, version: '1' } } }));
  await pollUntil(`${principal}'s initialize answer`, () => replies.get('init') ?? null, 20_000, 5);
  ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  return client;
}

const read = (c: Client, id: string) => c.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read', arguments: { path: 'big.txt' } } }));

/** From now on the client reads nothing: what the server sends it piles up. */
const stopReading = (c: Client) => (c.ws as unknown as { _socket: { pause(): void } })._socket.pause();
const readAgain = (c: Client) => (c.ws as unknown as { _socket: { resume(): void } })._socket.resume();

const warnings = () => server.stderr().split('\n').filter((l) => l.includes(WARNING));

e2e('non-readers over the budget: the largest is closed; a reader and a small non-reader keep their sessions', async () => {
  const reader = await open('reader');
  const small = await open('small');
  const bigs = [await open('big1'), await open('big2'), await open('big3')];
  read(reader, 'r0');
  const first = await pollUntil('the reader\'s first answer', () => reader.replies.get('r0') ?? null, 30_000, 5);
  assert.match(first, /line 00000/);
  const message = Buffer.byteLength(first);

  stopReading(small);
  read(small, 's0');
  read(small, 's1');
  for (const big of bigs) {
    stopReading(big);
    for (let i = 0; i < BIG_READS; i++) read(big, `b${i}`);
  }
  // The reader goes on, one call at a time, while the others pile up output it never sees.
  let asked = 1;
  const readerTurns = async (until: () => boolean) => {
    for (; !until() && asked < 200; asked++) {
      read(reader, `r${asked}`);
      const id = `r${asked}`;
      const answer = await pollUntil(`the reader's answer ${id}`, () => reader.replies.get(id) ?? null, 30_000, 5);
      assert.is(answer.replace(/"id":"r\d+"/, ''), first.replace(/"id":"r0"/, ''), 'the reader gets every answer whole');
    }
  };
  await readerTurns(() => warnings().length > 0);
  await readerTurns(() => asked >= 10 && asked % 10 === 0);

  const seen = warnings();
  assert.ok(seen.length > 0, 'the budget closed a socket');
  for (const line of seen) {
    const principal = /"principal":"(\w+)"/.exec(line)?.[1];
    assert.ok(principal !== undefined && principal.startsWith('big'), `only a large non-reader is closed: ${line}`);
    assert.match(line, new RegExp(`"limit":${BUDGET}`), line);
    assert.not.match(line, /token-/, 'no token in the log');
    // The write that passed the budget added at most one message to a total within it.
    const total = Number(/"total":(\d+)/.exec(line)?.[1]);
    assert.ok(total > BUDGET && total <= BUDGET + message + 16, `the counted total ${total} is within the budget ${BUDGET} plus one message (${message})`);
  }
  assert.is(reader.isClosed, false, 'the reader keeps its socket');
  // A closed socket's client learns of it once it reads again.
  const closedNames = new Set(seen.map((line) => /"principal":"(\w+)"/.exec(line)?.[1]));
  for (const [i, big] of bigs.entries()) {
    if (!closedNames.has(`big${i + 1}`)) continue;
    readAgain(big);
    await guarded(big.closed, `big${i + 1}'s socket closing`);
  }

  // The small non-reader reads again and gets both its answers.
  readAgain(small);
  await pollUntil('the small client\'s answers', () => (small.replies.has('s0') && small.replies.has('s1') ? true : null), 30_000, 10);
  assert.is(small.isClosed, false, 'the small non-reader keeps its socket');
  for (const c of [reader, small, ...bigs]) c.ws.terminate();
});

e2e.run();
