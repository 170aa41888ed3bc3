// Fuzz, Streamable HTTP: 10,000 generated POSTs (valid requests with random params, broken JSON, wrong
// types, huge ids, bounded nesting, batches, unknown and Object.prototype method names, notifications,
// responses) to a real server process, over sessions of each version, none, and unknown ones; a third are
// 2026-07-28 requests (fuzz-modern.ts), mostly without a session (anonymous or with a bearer token), with `MCP-Protocol-Version`, `Mcp-Method`
// and `Mcp-Name` headers that agree with the body or not. Every POST gets an HTTP response; every modern
// request is answered with its id (a listen: its acknowledgment, read off its stream, which the test then
// closes), headers that disagree with the body are 400 with -32020; afterwards a fresh modern client
// (server/discover, a read) and a fresh 2025 client are served normally and the RSS stays bounded.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { UNCAUGHT_MESSAGE } from '../../src/cli/last-resort.ts';
import { makeSandbox } from './fixtures.ts';
import { FUZZ_MESSAGES, FUZZ_RSS_LIMIT_BYTES, FUZZ_SEED, FuzzGenerator, Rng, rssOf, startFuzzServer } from './fuzz.ts';
import { ModernAnswers, modernMeta } from './fuzz-modern.ts';

const ACCEPT = 'application/json, text/event-stream';
/** POSTs in flight at once. */
const CONCURRENCY = 8;
/** A POST unanswered after this long counts as hung (nothing in the run is slow; the margin is for a loaded machine). */
const POST_DEADLINE_MS = 20_000;
/** The run stops early once this many POSTs failed: enough to report, and a broken server fails fast. */
const ENOUGH_FAILURES = 20;

const initBody = (version: string) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } });

const ACKNOWLEDGED = 'notifications/subscriptions/acknowledged';

/**
 * One POST and its whole reply; a `subscriptions/listen` stream (which stays open until the client
 * closes it) is read up to its acknowledgment and then closed, as a client that stops listening would.
 */
async function post(url: string, body: string | ArrayBuffer, headers: Record<string, string> = {}) {
  const closed = new AbortController();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, body, signal: AbortSignal.any([closed.signal, AbortSignal.timeout(POST_DEADLINE_MS)]) });
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream') || res.body === null) return { status: res.status, headers: res.headers, text: await res.text() };
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    // An event is whole once its blank line came.
    if (text.includes(ACKNOWLEDGED) && /\n\n/.test(text.slice(text.indexOf(ACKNOWLEDGED)))) {
      closed.abort();
      await reader.cancel().catch(() => undefined);
      break;
    }
  }
  return { status: res.status, headers: res.headers, text };
}

const MODERN_POST = { 'mcp-protocol-version': '2026-07-28' };
const FUZZ_TOKEN = 'fuzz-token-0123456789';

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
  // A token principal beside the anonymous one: its modern requests share pooled sessions and reach the
  // store (tasks/*, listens of its own tasks), which anonymous callers are refused before.
  const server = await startFuzzServer(box.ws, [], { SUPERPI_TOKENS: `${FUZZ_TOKEN}=fuzz-alice` });
  try {
    const sessions = await Promise.all(['2025-06-18', '2025-03-26', '2024-11-05', '2025-06-18'].map((v) => openSession(server.url, v)));
    const rng = new Rng(FUZZ_SEED);
    const generator = new FuzzGenerator(rng, { bytes: true, cancelUnusedIdsOnly: true, cancelListens: false });
    const cases = Array.from({ length: FUZZ_MESSAGES }, () => {
      const c = generator.next();
      const r = rng.int(100);
      const session = r < 90 ? rng.pick(sessions) : r < 95 ? {} : { 'mcp-session-id': 'no-such-session', 'mcp-protocol-version': '2025-06-18' };
      const body = c.kind === 'text' ? c.text : new Uint8Array(c.bytes).buffer;
      if (c.kind !== 'text' || c.headers === undefined) return { body, headers: session, stateless: false };
      // A 2026-07-28 request: mostly on no session (the stateless path), else on a 2025 session, whose
      // version header or its own wins.
      const q = rng.int(100);
      if (q < 75) return { body, headers: rng.chance(0.5) ? { ...c.headers, authorization: `Bearer ${FUZZ_TOKEN}` } : c.headers, expect: c.expect, stateless: true };
      return { body, headers: q < 90 ? { ...c.headers, ...session } : { ...session, ...c.headers }, expect: c.expect, stateless: false };
    });
    const modern = new ModernAnswers();
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let next = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < cases.length && failures.length < ENOUGH_FAILURES) {
        const c = cases[next++] as (typeof cases)[number];
        const expect = 'expect' in c ? c.expect : undefined;
        if (expect !== undefined) modern.sent({ expect });
        const t0 = Date.now();
        try {
          const r = await post(server.url, c.body, c.headers);
          if (process.env.FUZZ_DEBUG && Date.now() - t0 > 900) console.error(`slow ${Date.now() - t0} ms: ${r.status} ${String(c.body).slice(0, 300)} ${JSON.stringify(c.headers)} -> ${r.text.slice(0, 200)}`);
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          if (expect !== undefined) {
            const shown = `${r.status} for ${String(c.body).slice(0, 200)} with ${JSON.stringify(c.headers).slice(0, 300)}: ${r.text.slice(0, 200)}`;
            let messages: unknown[] = [];
            try {
              messages = messagesOf(r.text);
            } catch {
              failures.push(`a 2026-07-28 request answered with a body that is not JSON-RPC: ${shown}`);
            }
            for (const m of messages) modern.seen(m);
            if (c.stateless && expect.modern && expect.headersMismatch && (r.status !== 400 || !r.text.includes('"code":-32020'))) {
              failures.push(`headers that disagree with the body were not 400 with -32020: ${shown}`);
            }
            // Over a 2025 session the transport may refuse the POST by its headers (a 2026-07-28 version there)
            // before any core reads it; so may it a request that is not sorted modern and names no session.
            if ((!c.stateless || !expect.modern) && r.status >= 400) modern.refused(expect.id);
            if (r.status === 202) failures.push(`a request answered 202: ${shown}`);
          }
          if (r.status >= 500 && r.status !== 503) failures.push(`${r.status} for ${String(c.body).slice(0, 200)}: ${r.text.slice(0, 200)}`);
          // -32010: the session's actor died under the request. Without fault injection, that is a bug.
          if (r.text.includes('"code":-32010')) failures.push(`aborted by a crash: ${String(c.body).slice(0, 200)}: ${r.text.slice(0, 300)}`);
        } catch (err) {
          failures.push(`no response (${(err as Error).name}) for ${String(c.body).slice(0, 200)}`);
        }
      }
    }));
    assert.equal(failures.slice(0, 5), [], `${failures.length} POSTs failed (statuses ${JSON.stringify([...statuses])}); stderr: ${server.stderr().slice(-2000)}`);
    // Every POST is done: nothing may still be owed.
    const owed = await modern.settled();
    assert.equal(owed.slice(0, 5), [], `${owed.length} 2026-07-28 requests were not answered with their id`);
    assert.equal(modern.problems.slice(0, 5), [], `${modern.problems.length} answers to 2026-07-28 requests were malformed`);
    const outcomes = JSON.stringify([...modern.outcomes]);
    assert.ok((modern.outcomes.get('result') ?? 0) > 300 && (modern.outcomes.get('error') ?? 0) > 300 && (modern.outcomes.get('acknowledged') ?? 0) > 10, outcomes);

    // A fresh 2026-07-28 client: server/discover, then a read (no session).
    const discoverHeaders = { ...MODERN_POST, 'mcp-method': 'server/discover' };
    const discover = messagesOf((await post(server.url, JSON.stringify({ jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: modernMeta() } }), discoverHeaders)).text)[0] as { result: { supportedVersions: string[] } };
    assert.ok(discover.result.supportedVersions.includes('2026-07-28'), JSON.stringify(discover));
    const readHeaders = { ...MODERN_POST, 'mcp-method': 'tools/call', 'mcp-name': 'read', authorization: `Bearer ${FUZZ_TOKEN}` };
    const modernRead = await post(server.url, JSON.stringify({ jsonrpc: '2.0', id: 'r', method: 'tools/call', params: { name: 'read', arguments: { path: 'README.md' }, _meta: modernMeta() } }), readHeaders);
    assert.match(JSON.stringify(messagesOf(modernRead.text).find((m) => m.id === 'r')?.result), /Demo project/);

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
