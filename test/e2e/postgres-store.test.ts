// One super-pi node on the PostgreSQL store (`--store postgres://…`), end to end: real server processes,
// the official SDK client over Streamable HTTP with two tokens, a harness task driven by a scripted model,
// its transcript read back before and after the process restarts, and another principal refused. The
// store URL carries a password, which no log line or error may show. The database server is started by
// the test (test/store/postgres-server.ts); without PostgreSQL binaries those tests are reported skipped,
// with the reason. The start-up failures (a bad URL, an unreachable database) need no PostgreSQL.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { guarded } from '../hang-guard.ts';
import { type ScriptStep, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { findPostgres, type PostgresServer, startPostgres } from '../store/postgres-server.ts';
import { makeSandbox, repoRoot, type RunningServer, type Sandbox, startHttpServerProcess, TEST_STATE_KEY, textOf } from './fixtures.ts';

/** In every store URL here; it must never come out of a server process. */
const PASSWORD = 'pw-not-for-logs-93c1';
/** A process that fails at start-up exits long before this: a hang guard, not a speed claim. */
const START_FAILURE_GUARD_MS = 60_000;

const answer = (text: string): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });
const toolTurn = (name: string, args: object): ScriptStep => ({
  body: { choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: `call-${name}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }] } }] },
});

let box: Sandbox;
let home: string;

test.before(async () => {
  box = await makeSandbox();
  home = await mkdtemp(path.join(os.tmpdir(), 'superpi-pg-home-'));
});
test.after(async () => {
  await box.cleanup();
  await rm(home, { recursive: true, force: true });
});

/** Runs the server command line to its exit (it is expected to fail at start); its code and stderr. */
async function startToFailure(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'examples/server.ts'), '--port', '0', '--workspace', box.ws, ...args], {
    cwd: repoRoot, env: { ...process.env, SUPERPI_HOME: home, SUPERPI_STATE_KEY: TEST_STATE_KEY, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  try {
    const code = await guarded(new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c))), 'a server that should fail to start', START_FAILURE_GUARD_MS);
    return { code, stderr, stdout };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** A loopback port nothing listens on (the kernel's pick, released again). */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

test('an invalid --store value exits 2 with what --store takes, and never shows the password', async () => {
  for (const value of [`postgres://u:${PASSWORD}@127.0.0.1:99999/db`, `mysql://u:${PASSWORD}@127.0.0.1/db`, `postgres:u:${PASSWORD}@host/db`]) {
    const r = await startToFailure(['--store', value]);
    assert.is(r.code, 2, `${r.stderr} (for the value ${value.replace(PASSWORD, '…')})`);
    assert.match(r.stderr, /--store takes sqlite or a URL postgres:\/\//);
    assert.not.ok(r.stderr.includes(PASSWORD) || r.stdout.includes(PASSWORD), 'the password is not shown');
  }
});

test('SUPERPI_STORE is read as --store is: an invalid value exits 2 without the password', async () => {
  const r = await startToFailure([], { SUPERPI_STORE: `redis://u:${PASSWORD}@127.0.0.1/0` });
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, /not a redis: URL/, 'the value is named by its scheme only');
  assert.not.ok(r.stderr.includes(PASSWORD));
});

test('an unreachable PostgreSQL store stops the start (exit 1), naming host and database but not the password', async () => {
  const port = await closedPort();
  const r = await startToFailure(['--store', `postgresql://someone:${PASSWORD}@127.0.0.1:${port}/superpi`]);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, new RegExp(`conversation store could not be opened: postgresql://127\\.0\\.0\\.1:${port}/superpi: cannot connect`));
  assert.not.ok(r.stderr.includes(PASSWORD) || r.stdout.includes(PASSWORD));
  assert.not.match(r.stdout, /Streamable HTTP/, 'nothing was served');
});

const found = findPostgres();
if (found.ok) {
  let pg: PostgresServer | null = null;
  test.before(async () => {
    pg = await startPostgres(found);
  });
  test.after(async () => {
    await pg?.stop();
  });

  test('one node on PostgreSQL: a task\'s transcript is in the database, reads back after a restart, and another principal cannot read it', async () => {
    if (pg === null) throw new Error('the PostgreSQL server did not start');
    const database = await pg.createDatabase();
    const name = new URL(database).pathname.slice(1);
    const storeUrl = database.replace('postgres@', `postgres:${PASSWORD}@`);
    const model = await startScriptedServer([toolTurn('read', { path: 'src/greet.ts' }), answer('greet says hello.')]);
    const env = { SUPERPI_TOKENS: 'alice-token-123=alice,bob-token-4567=bob', SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_HOME: home };
    const servers: RunningServer[] = [];
    const clients: Client[] = [];
    const modernClients: ModernClient[] = [];
    const connect = async (server: RunningServer, token: string) => {
      const client = new Client({ name: token, version: '1' }, { capabilities: {} });
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      clients.push(client);
      return client;
    };
    const transcriptOf = async (client: Client, uri: string) => ((await client.readResource({ uri })).contents[0] as { text: string }).text;
    try {
      // First start by flag, the restart by environment: both name the store.
      const first = await startHttpServerProcess(box.ws, ['--store', storeUrl, '--node-id', 'node-a', '--log-level', 'debug'], env);
      servers.push(first);
      const alice = await connect(first, 'alice-token-123');
      const done = await alice.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'What does greet say?' } });
      assert.not.ok(done.isError, textOf(done));
      assert.is(textOf(done), 'greet says hello.');
      const id = (done.structuredContent as { conversation_id: string }).conversation_id;
      const uri = `superpi://conversation/${id}/transcript`;
      const before = await transcriptOf(alice, uri);
      const types = before.split('\n').map((l) => (JSON.parse(l) as { type: string }).type);
      assert.equal(types, ['user', 'model', 'tool_call', 'tool_result', 'model', 'final']);
      // In PostgreSQL, not in a SQLite file: the rows are there, and SUPERPI_HOME holds no database.
      const rows = await pg.query<{ n: string; principal: string }>(name, 'SELECT count(e.seq) AS n, c.principal FROM conversations c JOIN entries e ON e.conversation_id = c.id WHERE c.id = $1 GROUP BY c.principal', [id]);
      assert.equal(rows.rows, [{ n: String(types.length), principal: 'token:alice' }]);
      assert.not.ok(existsSync(path.join(home, 'super-pi.db')), 'no SQLite store was made');
      const health = await (await fetch(first.url.replace(/\/mcp$/, '/health'), { headers: { authorization: 'Bearer alice-token-123' } })).json() as { store?: unknown; node?: unknown };
      assert.equal(health.store, { backend: 'postgres', node: 'node-a' }, '/health names the backend and the node');
      // The task finished: this node holds no running task's lease, and its store answered the probe.
      assert.equal(health.node, { node: 'node-a', backend: 'postgres', store: { reachable: true }, tasks: 0, acceptingSessions: true, sessions: 1 }, '/health reports the node\'s store probe, the one session (alice\'s) it holds, and that it takes new sessions');
      const bob = await connect(first, 'bob-token-4567');
      await bob.readResource({ uri }).then(() => assert.unreachable('bob read alice\'s transcript'), (err: { code?: number }) => assert.is(err.code, -32002));
      for (const c of clients.splice(0)) await c.close();
      assert.is(await first.stop(), 0);

      const second = await startHttpServerProcess(box.ws, ['--node-id', 'node-a', '--log-level', 'debug'], { ...env, SUPERPI_STORE: storeUrl });
      servers.push(second);
      const aliceAgain = await connect(second, 'alice-token-123');
      assert.is(await transcriptOf(aliceAgain, uri), before, 'the same transcript after the restart');
      const bobAgain = await connect(second, 'bob-token-4567');
      await bobAgain.readResource({ uri }).then(() => assert.unreachable('bob read alice\'s transcript after the restart'), (err: { code?: number }) => assert.is(err.code, -32002));
      assert.not.ok((await bobAgain.listResources()).resources.some((r) => r.uri.includes(id)), 'not listed to another principal');
      // Over 2026-07-28 resources/list is the principal's conversations from the store (here PostgreSQL), after the restart too.
      const modernList = async (token: string) => {
        const client = new ModernClient({ name: token, version: '2' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
        modernClients.push(client);
        await client.connect(new ModernHttpTransport(new URL(second.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
        return (await client.listResources(undefined, { cacheMode: 'bypass' })).resources.map((r) => r.uri);
      };
      assert.ok((await modernList('alice-token-123')).includes(uri), 'listed to alice from the store, on a new connection after the restart');
      assert.not.ok((await modernList('bob-token-4567')).some((u) => u.includes(id)), 'never listed to bob');
      const stolen = await bobAgain.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'continue', conversation_id: id } });
      assert.is(stolen.isError, true);
      assert.match(textOf(stolen), new RegExp(`conversation ${id} not found`));
      for (const c of clients.splice(0)) await c.close();
      for (const c of modernClients.splice(0)) await c.close();
      assert.is(await second.stop(), 0);
      for (const s of servers) {
        assert.match(s.stderr(), /conversation store: PostgreSQL/, 'the log says which store is used');
        assert.not.ok(s.stderr().includes(PASSWORD), 'the password is in no log line');
      }
    } catch (err) {
      for (const s of servers) console.error(s.stderr().replaceAll(PASSWORD, '(the password)'));
      throw err;
    } finally {
      for (const c of clients) await c.close();
      for (const c of modernClients) await c.close();
      for (const s of servers) await s.stop();
      await model.close();
    }
  });
} else {
  console.log(`  (skipped: the one-node PostgreSQL test needs a PostgreSQL server: ${found.reason})`);
  test.skip('one node on PostgreSQL: a task\'s transcript is in the database, reads back after a restart, and another principal cannot read it', () => undefined);
}

test.run();
