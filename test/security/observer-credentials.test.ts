// Rule (security review, finding 1): nothing an observer receives is a credential. A Streamable HTTP
// session's `Mcp-Session-Id` is the only credential of an anonymous session (and half of a token
// session's), so the observer names each session by its handle (`session-K`, the server's own counter),
// never by the registry's id: the snapshot stream (sessions, tree, worker actors, task rows) and the
// transcript view carry no full session id and no bearer token, for any number and mix of sessions —
// anonymous or not, HTTP or WebSocket — and for the tasks they run. Caller classes: anonymous remote
// callers and token principals (what they hold), an observer (what it sees).

import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { type ScriptedServer, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess, textOf } from '../e2e/fixtures.ts';

const OBSERVER = 'alice-observer-credentials';
const BOB = 'bob-plain-credentials';
const TOKENS = [OBSERVER, BOB];

let box: Sandbox;
let home: string;
let model: ScriptedServer;
let server: RunningServer;
let base: string;

test.before(async () => {
  box = await makeSandbox();
  home = await mkdtemp(path.join(os.tmpdir(), 'superpi-observer-credentials-'));
  const answer = (text: string) => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });
  model = await startScriptedServer([answer('first task done.'), answer('second task done.')]);
  server = await startHttpServerProcess(box.ws, ['--threads', '1', '--tool-threads', '1', '--observers', 'alice', '--allow-anonymous-tasks'], {
    SUPERPI_TOKENS: `${OBSERVER}=alice,${BOB}=bob`, SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_API_KEY: 'sk-test', SUPERPI_HOME: home,
  });
  base = server.url.replace(/\/mcp$/, '');
});

test.after(async () => {
  await server?.stop();
  await model?.close();
  await box?.cleanup();
  if (home !== undefined) await rm(home, { recursive: true, force: true });
});

interface Snapshot { sessionCount: number; sessions: { id: string }[]; tasks: { id: string; session: string; status: string }[] }

/** The first frame of the observer's event stream, as sent (text) and read. */
function snapshot(): Promise<{ raw: string; data: Snapshot }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/observer/events`, { headers: { authorization: `Bearer ${OBSERVER}` } }, (res) => {
      let raw = '';
      res.on('data', (d: Buffer) => {
        raw += d.toString();
        const end = raw.indexOf('\n\n');
        if (end < 0) return;
        res.destroy();
        resolve({ raw, data: JSON.parse(raw.slice('data: '.length, end)) as Snapshot });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Snapshots read while waiting for one (each a stream opened and read to its first frame). */
const MAX_LOOKS = 400;

/**
 * The first snapshot that satisfies `ok` (the observer learns of a closed session a moment after it
 * closed), else — after MAX_LOOKS — the last one, for the caller's assertion to show what it holds.
 */
async function snapshotWhen(ok: (s: Snapshot) => boolean): Promise<{ raw: string; data: Snapshot }> {
  let s = await snapshot();
  for (let looks = 1; !ok(s.data) && looks < MAX_LOOKS; looks++) {
    await new Promise((r) => setTimeout(r, 25));
    s = await snapshot();
  }
  return s;
}

/** The credentials in `text`: each full session id and each bearer token found in it. */
function credentialsIn(text: string, ids: readonly string[]): string[] {
  return [...ids, ...TOKENS].filter((secret) => text.includes(secret));
}

type Kind = 'http-anonymous' | 'http-token' | 'ws-anonymous' | 'ws-token';
interface Opened { kind: Kind; id: string | null; close(): Promise<void> }

async function openHttp(token: string | null): Promise<Opened & { client: Client }> {
  const client = new Client({ name: 'observer-credentials', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(server.url), token === null ? {} : { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  const id = transport.sessionId ?? null;
  assert.ok(id !== null && id.length >= 32, 'the client holds a full session id');
  return {
    kind: token === null ? 'http-anonymous' : 'http-token', id, client,
    close: async () => {
      await transport.terminateSession();
      await client.close();
    },
  };
}

function openWs(token: string | null): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(server.wsUrl, 'mcp', token === null ? {} : { headers: { authorization: `Bearer ${token}` } });
    ws.once('error', reject);
    ws.once('open', () => {
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'ws', version: '1' } } }));
    });
    ws.once('message', () => resolve({
      kind: token === null ? 'ws-anonymous' : 'ws-token', id: null,
      close: () => new Promise<void>((r) => {
        ws.once('close', () => r());
        ws.close();
      }),
    }));
  });
}

function open(kind: Kind): Promise<Opened> {
  switch (kind) {
    case 'http-anonymous': return openHttp(null);
    case 'http-token': return openHttp(BOB);
    case 'ws-anonymous': return openWs(null);
    case 'ws-token': return openWs(BOB);
  }
}

test('property: across any mix of anonymous and token sessions over HTTP and WebSocket, no snapshot carries a full session id or a token', async () => {
  const before = (await snapshot()).data.sessionCount;
  const seen: string[] = [];
  await fc.assert(fc.asyncProperty(fc.array(fc.constantFrom<Kind>('http-anonymous', 'http-token', 'ws-anonymous', 'ws-token'), { minLength: 1, maxLength: 6 }), async (kinds) => {
    const opened: Opened[] = [];
    try {
      for (const kind of kinds) opened.push(await open(kind));
      const ids = opened.flatMap((o) => (o.id === null ? [] : [o.id]));
      seen.push(...ids);
      // Every session is shown (so the check below looks at rows that are there), under its handle.
      const { raw, data } = await snapshotWhen((s) => s.sessionCount === before + kinds.length);
      assert.is(data.sessions.length, before + kinds.length);
      for (const row of data.sessions) assert.match(row.id, /^session-\d+$/, 'a session is shown by its handle');
      // Not only this run's: an id of an earlier run's session, ended or not, appears nowhere either.
      assert.equal(credentialsIn(raw, seen), [], 'a credential in the snapshot');
    } finally {
      for (const o of opened) await o.close();
    }
    assert.is((await snapshotWhen((s) => s.sessionCount === before)).data.sessionCount, before, 'the closed sessions left the observer');
  }), { numRuns: 12, endOnFailure: true });
  assert.ok(seen.length > 0, 'some HTTP sessions were made');
});

test('the tasks of an anonymous and a token session: their rows and transcripts carry no session id or token', async () => {
  const anonymous = await openHttp(null);
  const bob = await openHttp(BOB);
  const ids = [anonymous.id, bob.id] as string[];
  try {
    for (const [client, prompt] of [[anonymous.client, 'first?'], [bob.client, 'second?']] as const) {
      const result = await client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt } });
      assert.match(textOf(result), /task done/);
    }
    const { raw, data } = await snapshotWhen((s) => s.tasks.filter((t) => t.status === 'completed').length === 2);
    assert.equal(credentialsIn(raw, ids), []);
    const handles = new Set(data.sessions.map((s) => s.id));
    for (const task of data.tasks) {
      assert.ok(handles.has(task.session), `task ${task.id} names its session by the handle the sessions list shows`);
      const r = await fetch(`${base}/observer/transcript?task=${task.id}&after=0`, { headers: { authorization: `Bearer ${OBSERVER}` } });
      assert.is(r.status, 200);
      const text = await r.text();
      assert.ok((JSON.parse(text) as { entries: unknown[] }).entries.length >= 2, 'the transcript view has the prompt and the answer');
      assert.equal(credentialsIn(text, ids), [], `a credential in task ${task.id}'s transcript view`);
    }
  } finally {
    await anonymous.close();
    await bob.close();
  }
});

test.run();
