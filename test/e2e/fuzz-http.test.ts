// Fuzz, Streamable HTTP: 10,000 generated POSTs (valid requests with random params, broken JSON, wrong
// types, huge ids, bounded nesting, batches, unknown and Object.prototype method names, notifications,
// responses) to a real server process, over sessions of each version, none, and unknown ones. Every POST
// gets an HTTP response; afterwards a fresh client is served normally and the RSS stays bounded.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { UNCAUGHT_MESSAGE } from '../../src/cli/last-resort.ts';
import { makeSandbox } from './fixtures.ts';
import { FUZZ_MESSAGES, FUZZ_RSS_LIMIT_BYTES, FUZZ_SEED, fuzzCase, Rng, rssOf, startFuzzServer } from './fuzz.ts';

const ACCEPT = 'application/json, text/event-stream';
/** POSTs in flight at once. */
const CONCURRENCY = 8;
/** A POST unanswered after this long counts as hung (nothing in the run is slow; the margin is for a loaded machine). */
const POST_DEADLINE_MS = 20_000;
/** The run stops early once this many POSTs failed: enough to report, and a broken server fails fast. */
const ENOUGH_FAILURES = 20;

const initBody = (version: string) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } });

async function post(url: string, body: string | ArrayBuffer, headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, body, signal: AbortSignal.timeout(POST_DEADLINE_MS) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

function messagesOf(text: string): { id?: unknown; result?: unknown; error?: unknown }[] {
  const t = text.trimStart();
  if (t.startsWith('{') || t.startsWith('[')) {
    const v = JSON.parse(t) as unknown;
    return (Array.isArray(v) ? v : [v]) as { id?: unknown }[];
  }
  return text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as { id?: unknown });
}

async function openSession(url: string, version: string): Promise<Record<string, string>> {
  const r = await post(url, initBody(version));
  assert.is(r.status, 200, r.text);
  const headers = { 'mcp-session-id': r.headers.get('mcp-session-id') as string, 'mcp-protocol-version': version };
  await post(url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers);
  return headers;
}

test(`HTTP: ${FUZZ_MESSAGES} generated POSTs each get a response; then a fresh client is served and RSS < ${FUZZ_RSS_LIMIT_BYTES / 2 ** 20} MB (seed ${FUZZ_SEED})`, async () => {
  const box = await makeSandbox();
  const server = await startFuzzServer(box.ws);
  try {
    const sessions = await Promise.all(['2025-06-18', '2025-03-26', '2024-11-05', '2025-06-18'].map((v) => openSession(server.url, v)));
    const rng = new Rng(FUZZ_SEED);
    const cases = Array.from({ length: FUZZ_MESSAGES }, () => {
      const c = fuzzCase(rng, { bytes: true, cancelUnusedIdsOnly: true });
      const r = rng.int(100);
      const headers = r < 90 ? rng.pick(sessions) : r < 95 ? {} : { 'mcp-session-id': 'no-such-session', 'mcp-protocol-version': '2025-06-18' };
      return { body: c.kind === 'text' ? c.text : new Uint8Array(c.bytes).buffer, headers };
    });
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let next = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < cases.length && failures.length < ENOUGH_FAILURES) {
        const c = cases[next++] as (typeof cases)[number];
        try {
          const r = await post(server.url, c.body, c.headers);
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          if (r.status >= 500 && r.status !== 503) failures.push(`${r.status} for ${String(c.body).slice(0, 200)}: ${r.text.slice(0, 200)}`);
          // -32010: the session's actor died under the request. Without fault injection, that is a bug.
          if (r.text.includes('"code":-32010')) failures.push(`aborted by a crash: ${String(c.body).slice(0, 200)}: ${r.text.slice(0, 300)}`);
        } catch (err) {
          failures.push(`no response (${(err as Error).name}) for ${String(c.body).slice(0, 200)}`);
        }
      }
    }));
    assert.equal(failures.slice(0, 5), [], `${failures.length} POSTs failed (statuses ${JSON.stringify([...statuses])}); stderr: ${server.stderr().slice(-2000)}`);

    // A fresh client: initialize, tools/list, a read.
    const fresh = await openSession(server.url, '2025-06-18');
    const list = messagesOf((await post(server.url, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }), fresh)).text)[0] as { result: { tools: { name: string }[] } };
    assert.ok(list.result.tools.some((t) => t.name === 'read'));
    const read = messagesOf((await post(server.url, JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'read', arguments: { path: 'README.md' } } }), fresh)).text);
    assert.match(JSON.stringify(read.find((m) => m.id === 3)?.result), /Demo project/);

    assert.not.ok(server.stderr().includes(UNCAUGHT_MESSAGE), 'no fuzzed message reached the uncaught-failure policy');
    const rss = await rssOf(server.child.pid as number);
    assert.ok(rss < FUZZ_RSS_LIMIT_BYTES, `RSS ${Math.round(rss / 2 ** 20)} MB`);
  } finally {
    await server.stop();
    await box.cleanup();
  }
});

test.run();
