// Threat model, resource fairness (issue 10, item 11). Rule: one caller cannot starve the others — no
// pattern makes a `grep` run longer than reading its input takes (linear-time matching, RE2), and no
// principal holds every tool-pool thread (a fair share of the pool), so another principal's call is
// answered while the first one's work goes on.
// Caller classes: token principals (A floods, B must be served) and anonymous remote callers (all of
// whose sessions together count as one principal); workspace content (the file searched) is the lever.
// Through the real server over Streamable HTTP with two tool threads. No timing assertions: a starved
// call would be answered only at the tool deadline (600 s), long after the runner kills this file.

import { writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from '../e2e/fixtures.ts';

const ACCEPT = 'application/json, text/event-stream';
const ALICE = { authorization: 'Bearer alice-token-123' };
const BOB = { authorization: 'Bearer bob-token-4567' };
const ANONYMOUS = {};
/** A line `^(a+)+$` can split 2^40 ways before it fails on the b: days for a backtracking engine. */
const EVIL_LINE = `${'a'.repeat(40)}b`;
/**
 * Slow but linear: every line of the slow/ files is tested (no literal for a prefilter, no whole-file
 * shortcut), and none matches, as the files hold no digit (about two seconds per call here).
 */
const SLOW_PATTERN = '[a-z]+\\s[a-z]+\\s\\d';
const SLOW_FILES = 8;
const SLOW_FILE_BYTES = 9 * 1024 * 1024;

/** Lines of 63 pseudo-random letters and spaces. */
function slowContent(bytes: number): Buffer {
  const alphabet = Buffer.from('abcdefghijklmnopqrstuvwxyz ');
  const out = Buffer.alloc(bytes);
  let seed = 7;
  for (let i = 0; i < bytes; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    out[i] = i % 64 === 63 ? 0x0a : (alphabet[(seed >> 8) % alphabet.length] as number);
  }
  return out;
}

type Headers = Record<string, string>;
interface ToolResult { isError?: boolean; content: { type: string; text: string }[] }

async function post(url: string, body: unknown, headers: Headers): Promise<{ status: number; sessionId: string | null; messages: Record<string, unknown>[] }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': '2025-06-18', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  const messages = text.trimStart().startsWith('{')
    ? [JSON.parse(text) as Record<string, unknown>]
    : text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
  return { status: res.status, sessionId: res.headers.get('mcp-session-id'), messages };
}

async function openSession(url: string, headers: Headers): Promise<Headers> {
  const r = await post(url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'starvation', version: '1' } } }, headers);
  assert.is(r.status, 200);
  const session = { ...headers, 'mcp-session-id': r.sessionId as string };
  await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, session);
  return session;
}

let nextId = 1;
async function grep(url: string, session: Headers, args: Record<string, unknown>): Promise<ToolResult> {
  const id = nextId++;
  const r = await post(url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'grep', arguments: args } }, session);
  const reply = r.messages.find((m) => m.id === id);
  assert.ok(reply && 'result' in reply, JSON.stringify(r.messages));
  return reply.result as ToolResult;
}

/** Runs the calls at once and returns their labels in the order they were answered. */
async function answerOrder(calls: [string, Promise<ToolResult>][]): Promise<{ order: string[]; results: Map<string, ToolResult> }> {
  const order: string[] = [];
  const results = new Map<string, ToolResult>();
  await Promise.all(calls.map(([label, call]) => call.then((r) => { order.push(label); results.set(label, r); })));
  return { order, results };
}

/** Lets calls already sent reach the tool pool before the next is sent; a shorter wait only weakens a test, never fails it. */
const settle = () => new Promise<void>((r) => setTimeout(r, 300));

const starvation = suite('tool-pool starvation');
let box: Sandbox;
let server: RunningServer;

starvation.before(async () => {
  box = await makeSandbox();
  await writeFile(path.join(box.ws, 'evil.txt'), `${EVIL_LINE}\n`.repeat(1000));
  await mkdir(path.join(box.ws, 'slow'));
  const content = slowContent(SLOW_FILE_BYTES);
  for (let i = 0; i < SLOW_FILES; i++) await writeFile(path.join(box.ws, 'slow', `part-${i}.txt`), content);
  server = await startHttpServerProcess(box.ws, ['--tool-threads', '2'], { SUPERPI_TOKENS: 'alice-token-123=alice,bob-token-4567=bob' });
  // Both pool threads booted before the tests, so an order says who was let onto a thread, not whose thread booted first.
  const [alice, bob] = await Promise.all([openSession(server.url, ALICE), openSession(server.url, BOB)]);
  await Promise.all([grep(server.url, alice, { pattern: 'greet' }), grep(server.url, bob, { pattern: 'greet' })]);
});

starvation.after(async () => {
  assert.is(await server.stop(), 0);
  await box.cleanup();
});

starvation('two catastrophic-backtracking greps from A do not hold the pool: B\'s grep is answered, and so are A\'s', async () => {
  const alice = await openSession(server.url, ALICE);
  const bob = await openSession(server.url, BOB);
  const evil1 = grep(server.url, alice, { pattern: '^(a+)+$', path: 'evil.txt' });
  const evil2 = grep(server.url, alice, { pattern: '^(a+)+$', path: 'evil.txt' });
  await settle();
  const ordinary = await grep(server.url, bob, { pattern: 'greet', path: 'src' });
  assert.not.ok(ordinary.isError, ordinary.content[0]?.text);
  assert.match(ordinary.content[0]?.text ?? '', 'src/greet.ts:1: export function greet');
  for (const r of await Promise.all([evil1, evil2])) {
    assert.not.ok(r.isError, r.content[0]?.text);
    assert.is(r.content[0]?.text, 'No matches found');
  }
});

starvation('A\'s long greps leave a thread free: B\'s grep is answered before any of A\'s', async () => {
  const alice = await openSession(server.url, ALICE);
  const bob = await openSession(server.url, BOB);
  const slow: [string, Promise<ToolResult>][] = [1, 2, 3].map((n) => [`A${n}`, grep(server.url, alice, { pattern: SLOW_PATTERN, path: 'slow' })]);
  await settle();
  const { order, results } = await answerOrder([...slow, ['B', grep(server.url, bob, { pattern: 'greet', path: 'src' })]]);
  assert.is(order[0], 'B', `answered in the order ${order.join(' ')}`);
  for (const r of results.values()) assert.not.ok(r.isError, r.content[0]?.text);
});

starvation('anonymous sessions together get one principal\'s share: a token holder is answered before any of three anonymous sessions\' long greps', async () => {
  const anonymous = await Promise.all([1, 2, 3].map(() => openSession(server.url, ANONYMOUS)));
  const bob = await openSession(server.url, BOB);
  const slow: [string, Promise<ToolResult>][] = anonymous.map((session, i) => [`anon${i + 1}`, grep(server.url, session, { pattern: SLOW_PATTERN, path: 'slow' })]);
  await settle();
  const { order, results } = await answerOrder([...slow, ['B', grep(server.url, bob, { pattern: 'greet', path: 'src' })]]);
  assert.is(order[0], 'B', `answered in the order ${order.join(' ')}`);
  for (const r of results.values()) assert.not.ok(r.isError, r.content[0]?.text);
});

starvation.run();
