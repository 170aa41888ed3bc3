// Server-to-client messages across nodes (issue 14), with two real super-pi nodes on one real
// PostgreSQL: on a PostgreSQL store every SSE event is kept in the session event log before it is
// written, with the log's seq as its id, and a POST stream opens with a priming event; a GET with
// Last-Event-ID is served from the log on a node that does not hold the session, then follows the
// stream as the holder appends (NOTIFY), and ends after the answer; the log is the principal's only;
// a plain JSON reply writes nothing to it; a transcript appended on one node reaches a session on the
// other subscribed to it. On SQLite nothing changes: no priming event, ids from the process.
// Without PostgreSQL binaries the cluster tests are reported skipped, with the reason.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { guarded } from '../hang-guard.ts';
import { type ScriptedServer, type ScriptStep, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { findPostgres, postgresBinDirs, postgresForSuite } from '../store/postgres-server.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';
import { type SseEvent, sseReader } from './sse-reader.ts';

const ALICE = 'alice-token-123';
const BOB = 'bob-token-4567';
const ACCEPT = 'application/json, text/event-stream';
/** A hang guard for a step that waits on another process: far longer than it takes, not a speed claim. */
const GUARD_MS = 60_000;
const answer = (text: string): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });

interface Opened {
  readonly session: string;
  readonly headers: Record<string, string>;
}

async function initialize(url: string, token: string): Promise<Opened> {
  const auth = { authorization: `Bearer ${token}` };
  const res = await fetch(url, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...auth },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
  });
  assert.is(res.status, 200);
  await res.text();
  const session = res.headers.get('mcp-session-id') as string;
  const headers = { ...auth, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
  const done = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  assert.is(done.status, 202);
  return { session, headers };
}

function post(url: string, o: Opened, message: object): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...o.headers }, body: JSON.stringify(message) });
}

function resume(url: string, o: Opened, lastEventId: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'GET', headers: { accept: 'text/event-stream', ...o.headers, 'last-event-id': lastEventId, ...headers } });
}

const harnessCall = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'Say hi.' } } });

const box: { current: Sandbox | null } = { current: null };
function sandbox(): Sandbox {
  if (box.current === null) throw new Error('no sandbox');
  return box.current;
}

test.before(async () => {
  box.current = await makeSandbox();
});

test('on SQLite nothing changes: a POST stream opens with no priming event, its ids are the process\'s, and a GET resumes from memory', async () => {
  let release!: () => void;
  const model = await startScriptedServer([{ ...answer('hi'), release: new Promise<void>((r) => (release = r)) }]);
  const node = await startHttpServerProcess(sandbox().ws, ['--threads', '1', '--tool-threads', '1'], { SUPERPI_TOKENS: `${ALICE}=alice`, SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted' });
  try {
    const o = await initialize(node.url, ALICE);
    const res = await post(node.url, o, harnessCall(2));
    assert.is(res.headers.get('content-type'), 'text/event-stream');
    const events = sseReader(res.body as ReadableStream<Uint8Array>);
    release();
    const all = await guarded(events.rest(), 'the answer on SQLite', GUARD_MS);
    assert.is(all.length, 1, 'the answer only: no priming event');
    assert.is(all[0]?.id, '1');
    assert.is((JSON.parse(all[0]?.data ?? '{}') as { id?: number }).id, 2);
  } finally {
    await node.stop();
    await model.close();
  }
});

const found = findPostgres();
if (found.ok) {
  const postgres = postgresForSuite(test, found);

  async function cluster(script: ScriptStep[]) {
    const server = postgres();
    const url = await server.createDatabase();
    const name = new URL(url).pathname.slice(1);
    const model: ScriptedServer = await startScriptedServer(script);
    const env = { SUPERPI_TOKENS: `${ALICE}=alice,${BOB}=bob`, SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted' };
    const nodes: RunningServer[] = [];
    const clients: Client[] = [];
    return {
      model,
      async node(id: string) {
        const node = await startHttpServerProcess(sandbox().ws, ['--store', url, '--node-id', id, '--threads', '1', '--tool-threads', '1'], env);
        nodes.push(node);
        return node;
      },
      async client(node: RunningServer) {
        const client = new Client({ name: 'alice', version: '1' }, { capabilities: {} });
        await client.connect(new StreamableHTTPClientTransport(new URL(node.url), { requestInit: { headers: { authorization: `Bearer ${ALICE}` } } }));
        clients.push(client);
        return client;
      },
      async events(session: string): Promise<{ seq: string; stream: string; data: string; ends: boolean }[]> {
        return (await server.query<{ seq: string; stream: string; data: string; ends: boolean }>(name, 'SELECT seq, stream, data, ends FROM session_events WHERE session_id = $1 ORDER BY seq', [session])).rows;
      },
      async conversations(): Promise<string[]> {
        return (await server.query<{ id: string }>(name, 'SELECT id FROM conversations')).rows.map((r) => r.id);
      },
      async drop(sql: string, params: unknown[]) {
        await server.query(name, sql, params);
      },
      async end(failed: boolean) {
        if (failed) for (const n of nodes) console.error(n.stderr());
        for (const c of clients) await c.close().catch(() => undefined);
        for (const n of nodes) await n.stop();
        await model.close();
      },
    };
  }

  test('a POST stream is primed and kept in the log; a GET with Last-Event-ID on the other node replays it, follows it as the holder appends, and ends after the answer', async () => {
    let release!: () => void;
    const c = await cluster([{ ...answer('hi from A'), release: new Promise<void>((r) => (release = r)) }]);
    let failed = true;
    try {
      const [a, b] = [await c.node('node-a'), await c.node('node-b')];
      const o = await initialize(a.url, ALICE);
      const res = await post(a.url, o, harnessCall(2));
      assert.is(res.headers.get('content-type'), 'text/event-stream');
      const onA = sseReader(res.body as ReadableStream<Uint8Array>);
      const priming = await guarded(onA.next(), 'the priming event', GUARD_MS) as SseEvent;
      assert.is(priming.data, '', 'the priming event has no data');
      assert.equal(await c.events(o.session), [{ seq: priming.id, stream: 'request:n:2', data: '', ends: false }], 'kept before it was written, its seq its id');
      const resumed = await resume(b.url, o, priming.id as string);
      assert.is(resumed.status, 200);
      assert.is(resumed.headers.get('content-type'), 'text/event-stream');
      const onB = sseReader(resumed.body as ReadableStream<Uint8Array>);
      release();
      const fromA = await guarded(onA.rest(), 'the answer on node A', GUARD_MS);
      const fromB = await guarded(onB.rest(), 'the answer replayed on node B, and the end of its stream', GUARD_MS);
      assert.is(fromA.length, 1);
      assert.equal(fromB, fromA, 'the same event, with the same id, on both nodes');
      const reply = JSON.parse(fromA[0]?.data ?? '{}') as { id?: number; result?: { content?: { text?: string }[] } };
      assert.is(reply.id, 2);
      assert.match(String(reply.result?.content?.[0]?.text), 'hi from A');
      const kept = await c.events(o.session);
      assert.equal(kept.map((e) => [e.seq, e.stream, e.ends]), [[priming.id, 'request:n:2', false], [fromA[0]?.id, 'request:n:2', true]]);
      failed = false;
    } finally {
      await c.end(failed);
    }
  });

  test('resuming is the principal\'s only (404 on every node), an id never sent is 400, an id older than the log keeps is 409, a plain JSON reply keeps nothing', async () => {
    let release!: () => void;
    const c = await cluster([{ ...answer('done'), release: new Promise<void>((r) => (release = r)) }]);
    let failed = true;
    try {
      const [a, b] = [await c.node('node-a'), await c.node('node-b')];
      const o = await initialize(a.url, ALICE);
      const listed = await post(a.url, o, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
      assert.is(listed.headers.get('content-type'), 'application/json');
      await listed.text();
      assert.equal(await c.events(o.session), [], 'a JSON reply writes nothing to the log');
      const res = await post(a.url, o, harnessCall(3));
      const onA = sseReader(res.body as ReadableStream<Uint8Array>);
      const priming = await guarded(onA.next(), 'the priming event', GUARD_MS) as SseEvent;
      const id = priming.id as string;
      for (const node of [a, b]) {
        const asBob = await resume(node.url, o, id, { authorization: `Bearer ${BOB}` });
        assert.is(asBob.status, 404, 'another principal\'s session does not exist');
        assert.not.match(await asBob.text(), 'request:');
      }
      const never = await resume(b.url, o, String(Number(id) + 5));
      assert.is(never.status, 400);
      assert.match(await never.text(), 'was never sent in this session');
      const garbage = await resume(b.url, o, 'abc');
      assert.is(garbage.status, 400);
      await garbage.text();
      await c.drop('DELETE FROM session_events WHERE session_id = $1 AND seq = $2', [o.session, id]);
      const expired = await resume(b.url, o, id);
      assert.is(expired.status, 409);
      assert.match(await expired.text(), 'no longer kept');
      release();
      await guarded(onA.rest(), 'the answer on node A', GUARD_MS);
      failed = false;
    } finally {
      await c.end(failed);
    }
  });
  test('a POST stream whose client went is not cancelled on a PostgreSQL store: its answer is kept, and a GET with Last-Event-ID on the other node gets it', async () => {
    let release!: () => void;
    const c = await cluster([{ ...answer('kept for you'), release: new Promise<void>((r) => (release = r)) }]);
    let failed = true;
    try {
      const [a, b] = [await c.node('node-a'), await c.node('node-b')];
      const o = await initialize(a.url, ALICE);
      const dropped = new AbortController();
      const res = await fetch(a.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...o.headers }, body: JSON.stringify(harnessCall(2)), signal: dropped.signal });
      const priming = await guarded(sseReader(res.body as ReadableStream<Uint8Array>).next(), 'the priming event', GUARD_MS) as SseEvent;
      dropped.abort();
      const resumed = await resume(b.url, o, priming.id as string);
      assert.is(resumed.status, 200);
      release();
      const events = await guarded(sseReader(resumed.body as ReadableStream<Uint8Array>).rest(), 'the answer on the resumed stream', GUARD_MS);
      assert.is(events.length, 1);
      const reply = JSON.parse(events[0]?.data ?? '{}') as { id?: number; result?: { content?: { text?: string }[] } };
      assert.is(reply.id, 2);
      assert.match(String(reply.result?.content?.[0]?.text), 'kept for you');
      failed = false;
    } finally {
      await c.end(failed);
    }
  });

  test('a session on node B subscribed to a conversation whose task runs on node A hears its updates (NOTIFY from A\'s appends)', async () => {
    let release!: () => void;
    const c = await cluster([{ ...answer('hi'), release: new Promise<void>((r) => (release = r)) }]);
    let failed = true;
    try {
      const [a, b] = [await c.node('node-a'), await c.node('node-b')];
      const onA = await c.client(a);
      const call = onA.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'Say hi.' } });
      const conversation = await guarded((async () => {
        for (;;) {
          const rows = await c.conversations();
          if (rows[0] !== undefined) return rows[0];
          await new Promise((r) => setTimeout(r, 100));
        }
      })(), 'the task\'s conversation on node A', GUARD_MS);
      const onB = await c.client(b);
      const uri = `superpi://conversation/${conversation}/transcript`;
      const updates: string[] = [];
      let heard!: () => void;
      const final = new Promise<void>((r) => (heard = r));
      onB.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        updates.push(n.params.uri);
        void onB.readResource({ uri }).then((r) => {
          if (String((r.contents[0] as { text?: string }).text).includes('"final"')) heard();
        }, (err: unknown) => updates.push(`read failed: ${String(err)}`));
      });
      await onB.subscribeResource({ uri });
      release();
      await guarded(call, 'the task\'s answer on node A', GUARD_MS);
      await guarded(final, 'node B hearing the transcript change up to its final entry', GUARD_MS);
      assert.ok(updates.length > 0);
      assert.ok(updates.every((u) => u === uri), updates.join(', '));
      failed = false;
    } finally {
      await c.end(failed);
    }
  });

} else {
  console.log(`  (skipped: the cluster event tests need a PostgreSQL server: ${found.reason})`);
  test.skip('a POST stream is primed and kept in the log; a GET with Last-Event-ID on the other node replays it, follows it as the holder appends, and ends after the answer', () => undefined);
  test.skip('resuming is the principal\'s only (404 on every node), an id never sent is 400, an id older than the log keeps is 409, a plain JSON reply keeps nothing', () => undefined);
  test.skip('a POST stream whose client went is not cancelled on a PostgreSQL store: its answer is kept, and a GET with Last-Event-ID on the other node gets it', () => undefined);
  test.skip('a session on node B subscribed to a conversation whose task runs on node A hears its updates (NOTIFY from A\'s appends)', () => undefined);
  test('without PostgreSQL binaries the reason names every directory searched', () => {
    for (const dir of postgresBinDirs()) assert.ok(found.reason.includes(dir), dir);
  });
}

test.after(async () => {
  await box.current?.cleanup();
});

test.run();
