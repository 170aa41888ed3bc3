// Sessions on any node (issue 14): two and three super-pi nodes (real processes) on one PostgreSQL store,
// behind the round-robin proxy (test/e2e/round-robin-proxy.ts: no session affinity), driven by the SDK
// client. Consecutive requests land on different nodes (the proxy's log says where each went), and a
// node that does not hold the session forwards the request to its home; another principal's session id
// is 404 through every node; an elicitation's answer POST reaches the home through another node; a
// transcript subscription gets its updates; and when the home of an idle session is killed with SIGKILL,
// the next request takes the session over on another node, which goes on with the negotiated version and
// the subscriptions from the stored checkpoint.
// The database server is started by the test (test/store/postgres-server.ts); without PostgreSQL binaries
// the tests are reported skipped, with the reason.

import { deserialize } from 'node:v8';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { guarded, pollUntil } from '../hang-guard.ts';
import { type ScriptedServer, type ScriptStep, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { findPostgres, postgresBinDirs } from '../store/postgres-server.ts';
import { clusterGround, type RunningServer, startHttpServerProcess, textOf } from './fixtures.ts';
import { type RoundRobinProxy, startRoundRobinProxy } from './round-robin-proxy.ts';

/** The node lease (`--task-lease`, seconds): short, so a takeover comes soon after a death. */
const LEASE_SECONDS = 3;
/** A hang guard for one whole scenario on a loaded 2-core machine that also runs PostgreSQL: not a speed claim. */
const SCENARIO_GUARD_MS = 120_000;
/** How often the test looks at the database while it waits. */
const POLL_MS = 100;

const ALICE = 'alice-token-123';
const BOB = 'bob-token-456';
const answer = (text: string): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });
const toolTurn = (name: string, args: object): ScriptStep => ({
  body: { choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: `call-${name}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }] } }] },
});

/** What a stored checkpoint says (the connection actor's own checkpoint, src/connection/connection-actor.ts). */
interface StoredState {
  protocolVersion: string | null;
  subscriptions: string[];
}

const found = findPostgres();
if (found.ok) {
  const ground = clusterGround(test, found);

  /** `n` nodes on a fresh database behind a round-robin proxy; `end` stops everything started. */
  async function cluster(n: number, script: ScriptStep[]) {
    const { pg: server, box } = ground();
    const url = await server.createDatabase();
    const name = new URL(url).pathname.slice(1);
    const model: ScriptedServer = await startScriptedServer(script);
    const env = { SUPERPI_TOKENS: `${ALICE}=alice,${BOB}=bob`, SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_TASK_LEASE: String(LEASE_SECONDS) };
    const nodes = new Map<string, RunningServer>();
    const clients: Client[] = [];
    let proxy: RoundRobinProxy | null = null;
    try {
      for (let i = 0; i < n; i++) {
        const id = `node-${String.fromCharCode(97 + i)}`;
        // Every other node runs the `super-pi` bundle, so forwarding is tested both ways between the
        // source and what users run (bench/cluster found forwarding failing in the bundle alone).
        nodes.set(id, await startHttpServerProcess(box.ws, ['--store', url, '--node-id', id, '--threads', '1', '--tool-threads', '1'], env, i % 2 === 0 ? 'source' : 'bundle'));
      }
      proxy = await startRoundRobinProxy([...nodes.values()].map((s) => base(s.url)));
    } catch (err) {
      for (const s of nodes.values()) await s.stop();
      await model.close();
      throw err;
    }
    const lb = proxy;
    return {
      model,
      nodes,
      proxy: lb,
      /** A client through the proxy (or straight to `direct`, a node's /mcp URL). */
      async client(token: string, onElicit?: (message: string) => Promise<void>, direct?: string) {
        const client = new Client({ name: 'c', version: '1' }, { capabilities: { elicitation: {} } });
        client.setRequestHandler(ElicitRequestSchema, async (req) => {
          await onElicit?.(req.params.message);
          return { action: 'accept', content: { allow: true } };
        });
        const transport = new StreamableHTTPClientTransport(new URL(direct ?? `${lb.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
        await client.connect(transport);
        clients.push(client);
        return { client, transport };
      },
      /** Moves a session's epoch on, as another node's takeover would. */
      async bumpEpoch(sessionId: string): Promise<void> {
        await server.query(name, 'UPDATE session_checkpoints SET epoch = epoch + 1 WHERE session_id = $1', [sessionId]);
      },
      /** The stored row of a session: its home node's id, epoch and state. */
      async row(sessionId: string): Promise<{ node: string; epoch: number; state: StoredState | null } | null> {
        const { rows } = await server.query<{ owner: string; epoch: string; bytes: Buffer }>(name, 'SELECT owner, epoch, bytes FROM session_checkpoints WHERE session_id = $1', [sessionId]);
        const r = rows[0];
        if (r === undefined) return null;
        const owner = JSON.parse(r.owner.slice('node:v1:'.length)) as [string, string];
        return { node: owner[0], epoch: Number(r.epoch), state: r.bytes.byteLength === 0 ? null : (deserialize(r.bytes) as StoredState) };
      },
      async end(failed: boolean) {
        if (failed) for (const [id, s] of nodes) console.error(`--- ${id}\n${s.stderr()}`);
        for (const c of clients) await c.close().catch(() => undefined);
        await lb.close();
        for (const s of nodes.values()) {
          if (s.child.exitCode !== null || s.child.signalCode !== null) continue;
          await s.stop();
        }
        await model.close();
      },
    };
  }

  /** `http://127.0.0.1:PORT/mcp` → `http://127.0.0.1:PORT` (what the proxy's log names). */
  function base(url: string): string {
    return new URL(url).origin;
  }

  function until<T>(what: string, probe: () => Promise<T | null>): Promise<T> {
    return pollUntil(what, probe, SCENARIO_GUARD_MS, POLL_MS);
  }

  for (const n of [2, 3]) {
    test(`${n} nodes behind a round-robin proxy: initialize, list and call tools (read, write, bash) with consecutive requests on different nodes; another principal's session is 404 on every node`, async () => {
      const c = await cluster(n, []);
      let failed = true;
      try {
        const { client, transport } = await c.client(ALICE);
        const sessionId = transport.sessionId as string;
        const tools = await client.listTools();
        assert.ok(tools.tools.some((t) => t.name === 'read'));
        const read = await client.callTool({ name: 'read', arguments: { path: 'src/greet.ts' } });
        assert.match(textOf(read), 'return `hello ${name}`');
        const write = await client.callTool({ name: 'write', arguments: { path: `notes/cluster-${n}.md`, content: 'written through the cluster\n' } });
        assert.not.ok(write.isError, textOf(write));
        const bash = await client.callTool({ name: 'bash', arguments: { command: `cat notes/cluster-${n}.md` } });
        assert.match(textOf(bash), 'written through the cluster');
        const nodeUrls = [...c.nodes.values()].map((s) => base(s.url));
        // Every node got requests, and no two consecutive requests went to the same node.
        for (const u of nodeUrls) assert.ok((c.proxy.hits.get(u) ?? 0) > 0, `${u} got no request`);
        const log = c.proxy.log;
        assert.ok(log.length >= 6, String(log.length));
        assert.equal(log.filter((u, i) => i > 0 && u === log[i - 1]), [], 'consecutive requests on different nodes');
        const home = await c.row(sessionId);
        assert.equal([home?.epoch, home?.state?.protocolVersion], [1, '2025-11-25'], 'claimed once on initialize, its checkpoint stored');
        // Bob sends alice's session id to every node: 404 from each, as for a session that does not exist.
        for (const u of nodeUrls) {
          const r = await fetch(`${u}/mcp`, {
            method: 'POST',
            headers: { authorization: `Bearer ${BOB}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
          });
          assert.is(r.status, 404, u);
          assert.match(await r.text(), 'unknown or ended session');
        }
        assert.is((await c.row(sessionId))?.epoch, 1, "bob's requests moved nothing");
        // /health: the home holds the one session; every other node holds none (its requests were forwarded).
        const held = await Promise.all([...c.nodes].map(async ([id, s]) => {
          const health = await (await fetch(`${base(s.url)}/health`, { headers: { authorization: `Bearer ${ALICE}` } })).json() as { node: { sessions: number } };
          return [id, health.node.sessions] as const;
        }));
        assert.equal(held, [...c.nodes.keys()].map((id) => [id, id === home?.node ? 1 : 0] as const), 'sessions held, per node');
        failed = false;
      } finally {
        await c.end(failed);
      }
    });
  }

  for (const n of [2, 3]) {
    test(`${n} nodes: an elicitation of a harness task on the session's home is answered by a POST landing on another node`, async () => {
      const c = await cluster(n, [toolTurn('bash', { command: 'echo asked-and-allowed' }), answer('ran it')]);
      let failed = true;
      try {
        const nodeUrls = [...c.nodes.values()].map((s) => base(s.url));
        let home = '';
        let answerAt = -1;
        const questions: string[] = [];
        const { client, transport } = await c.client(ALICE, async (message) => {
          questions.push(message);
          // Turn the proxy until the next request (the answer) goes to a node other than the home.
          while (nodeUrls[c.proxy.log.length % nodeUrls.length] === home) await client.ping();
          answerAt = c.proxy.log.length;
        });
        const row = await c.row(transport.sessionId as string);
        home = base((c.nodes.get(row?.node ?? '') as RunningServer).url);
        const r = await client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'run it' } });
        assert.is(textOf(r), 'ran it');
        assert.equal(questions.length, 1);
        assert.match(questions[0] as string, /wants to run the command: echo asked-and-allowed/);
        assert.ok(answerAt >= 0);
        assert.ok(c.proxy.log[answerAt] !== undefined && c.proxy.log[answerAt] !== home, `the answer went to ${c.proxy.log[answerAt]}, the home is ${home}`);
        const back = (c.model.requests[1]?.body as { messages: { role: string; content: string | null }[] }).messages.find((m) => m.role === 'tool');
        assert.match(back?.content ?? '', /asked-and-allowed/);
        failed = false;
      } finally {
        await c.end(failed);
      }
    });
  }

  for (const n of [2, 3]) {
    test(`${n} nodes: a transcript subscription gets notifications/resources/updated through the cluster; after its idle home is killed (SIGKILL) the next request takes the session over on another node, with its version and subscriptions`, async () => {
      const c = await cluster(n, [answer('first'), answer('second'), answer('third')]);
      let failed = true;
      try {
        const updates: string[] = [];
        const { client, transport } = await c.client(ALICE);
        client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => {
          updates.push(n.params.uri);
        });
        const sessionId = transport.sessionId as string;
        const first = await client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'one' } });
        const conversation = (first.structuredContent as { conversation_id: string }).conversation_id;
        const uri = `superpi://conversation/${conversation}/transcript`;
        await client.subscribeResource({ uri });
        const second = await client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'two', conversation_id: conversation } });
        assert.is(textOf(second), 'second');
        await until('an update of the subscribed transcript', async () => (updates.includes(uri) ? true : null));
        const before = await c.row(sessionId);
        assert.equal(before?.state?.subscriptions, [uri], 'the subscription is in the stored checkpoint');
        const homeId = before?.node as string;
        const home = c.nodes.get(homeId) as RunningServer;
        const survivors = [...c.nodes].filter(([id]) => id !== homeId);
        home.child.kill('SIGKILL');
        await new Promise<void>((resolve) => (home.child.exitCode !== null || home.child.signalCode !== null ? resolve() : home.child.once('exit', () => resolve())));
        // The load balancer notices the dead node (as a health check would); the session does not know yet.
        c.proxy.setTargets(survivors.map(([, s]) => base(s.url)));
        const listed = await client.listTools();
        assert.ok(listed.tools.some((t) => t.name === 'bash'));
        const after = await c.row(sessionId);
        assert.ok(survivors.some(([id]) => id === after?.node), `taken over by a surviving node, not ${after?.node}`);
        assert.is(after?.epoch, 2, 'taken over once');
        assert.equal([after?.state?.protocolVersion, after?.state?.subscriptions], ['2025-11-25', [uri]], 'with its negotiated version and subscriptions');
        updates.length = 0;
        const third = await client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'three', conversation_id: conversation } });
        assert.is(textOf(third), 'third');
        await until('an update of the subscribed transcript after the takeover', async () => (updates.includes(uri) ? true : null));
        failed = false;
      } finally {
        await c.end(failed);
      }
    });
  }
  test("a home stopped cleanly (SIGTERM) leaves the node registry: its session is taken over by the next request at once, without waiting out the lease", async () => {
    const c = await cluster(2, []);
    let failed = true;
    try {
      const { client, transport } = await c.client(ALICE);
      const sessionId = transport.sessionId as string;
      await client.listTools();
      const before = await c.row(sessionId);
      const homeId = before?.node as string;
      const survivors = [...c.nodes].filter(([id]) => id !== homeId);
      assert.is(await (c.nodes.get(homeId) as RunningServer).stop(), 0);
      c.proxy.setTargets(survivors.map(([, s]) => base(s.url)));
      const read = await client.callTool({ name: 'read', arguments: { path: 'src/math.ts' } });
      assert.match(textOf(read), 'a + b');
      const after = await c.row(sessionId);
      assert.equal([after?.node, after?.epoch, after?.state?.protocolVersion], [survivors[0]?.[0], 2, '2025-11-25']);
      assert.not.match((survivors[0]?.[1] as RunningServer).stderr(), 'cannot be reached while its lease is fresh', 'no wait: the home had left the registry');
      failed = false;
    } finally {
      await c.end(failed);
    }
  });

  test('a checkpoint save refused by the fence closes the local copy: its request in flight is answered -32010 session-moved, and that node no longer serves the session', async () => {
    const c = await cluster(2, [{ hang: true }]);
    let failed = true;
    try {
      const a = c.nodes.get('node-a') as RunningServer;
      const { client, transport } = await c.client(ALICE, undefined, a.url);
      const sessionId = transport.sessionId as string;
      const inFlight = client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'wait' } }).then(() => null, (err: unknown) => err as { code?: number; data?: unknown });
      await until('the task asking the model', async () => (c.model.requests.length >= 1 ? true : null));
      await c.bumpEpoch(sessionId);
      // A new log level changes the session's identity: node A saves a checkpoint, and the fence refuses it.
      await client.setLoggingLevel('debug');
      const refused = await guarded(inFlight, 'the request in flight answered', SCENARIO_GUARD_MS);
      assert.equal([refused?.code, refused?.data], [-32010, { reason: 'session-moved' }]);
      const r = await fetch(a.url, {
        method: 'POST',
        headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
      });
      assert.is(r.status, 404, 'node A holds no copy; the row names node A at an epoch it no longer holds, so nobody takes it over from here');
      assert.match(a.stderr(), 'another node holds this session now');
      failed = false;
    } finally {
      await c.end(failed);
    }
  });
} else {
  console.log(`  (skipped: the cluster session tests need a PostgreSQL server: ${found.reason})`);
  for (const n of [2, 3]) {
    test.skip(`${n} nodes behind a round-robin proxy: initialize, list and call tools (read, write, bash) with consecutive requests on different nodes; another principal's session is 404 on every node`, () => undefined);
  }
  for (const n of [2, 3]) {
    test.skip(`${n} nodes: an elicitation of a harness task on the session's home is answered by a POST landing on another node`, () => undefined);
    test.skip(`${n} nodes: a transcript subscription gets notifications/resources/updated through the cluster; after its idle home is killed (SIGKILL) the next request takes the session over on another node, with its version and subscriptions`, () => undefined);
  }
  test.skip("a home stopped cleanly (SIGTERM) leaves the node registry: its session is taken over by the next request at once, without waiting out the lease", () => undefined);
  test.skip('a checkpoint save refused by the fence closes the local copy: its request in flight is answered -32010 session-moved, and that node no longer serves the session', () => undefined);
  // The runner counts a file that ran no test as failed; this one checks that the reason names where it looked.
  test('without PostgreSQL binaries the reason names every directory searched', () => {
    for (const dir of postgresBinDirs()) assert.ok(found.reason.includes(dir), dir);
    assert.ok(postgresBinDirs().length > 0);
  });
}

test.run();
