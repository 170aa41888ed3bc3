// The session locator's decisions (src/cluster/session-locator.ts) on a real store (SQLite, two stores on
// one file standing for two nodes, on one fake clock) and a real home: an HTTP server on 127.0.0.1.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FORWARDED_BY_HEADER, type ForwardTarget } from '../../src/cluster/forward.ts';
import { NodeLease } from '../../src/cluster/node-lease.ts';
import { OrphanRequests } from '../../src/cluster/orphan-requests.ts';
import { type Located, SessionLocator } from '../../src/cluster/session-locator.ts';
import { createLogger } from '../../src/log/logger.ts';
import type { Principal } from '../../src/mcp/state.ts';
import { type AsyncConversationStore, SyncStoreAdapter } from '../../src/store/async-store.ts';
import { nodeOwnership } from '../../src/store/node-ownership.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { FakeClock } from '../../src/time/fake-clock.ts';
import { removeHome, tempHome } from '../store/helpers.ts';
import { HOME_RETRY_MS } from '../../src/limits.ts';
import { Cluster } from './orphan-store.ts';

const LEASE_MS = 3000;
const logger = createLogger('error', { write: () => true });
const alice: Principal = { kind: 'token', name: 'alice' };
const bob: Principal = { kind: 'token', name: 'bob' };

/** A reply target that keeps what was written. */
function replyTarget(): ForwardTarget & { status: number; body: string; headers: Record<string, string> } {
  return {
    status: 0, body: '', headers: {}, destroyed: false,
    writeHead(status: number, headers: Record<string, string>) { this.status = status; this.headers = headers; },
    flushHeaders() {},
    write(chunk: string) { this.body += chunk; },
    end(chunk?: string) { if (chunk) this.body += chunk; },
    on() {},
    once() {},
  };
}

/** A home node: answers every request 200 with what it got, and records the headers. */
async function startHome() {
  const seen: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers);
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': String(req.headers['mcp-session-id']) });
      res.write('data: one\n\n');
      res.end(`data: ${body}\n\n`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

async function setup() {
  const dir = await tempHome();
  const clock = new FakeClock(1_000_000);
  const file = path.join(dir, 'cluster.db');
  const open = (node: string, incarnation: string): AsyncConversationStore => new SyncStoreAdapter(SqliteConversationStore.open(file, { now: () => clock.now(), ownership: nodeOwnership(node, incarnation), leaseMs: LEASE_MS }));
  const a = open('node-a', 'a1');
  const b = open('node-b', 'b1');
  const closed: string[] = [];
  const leaseB = new NodeLease({ store: b, advertiseUrl: 'http://127.0.0.1:1', leaseMs: LEASE_MS, clock, logger });
  const locatorB = new SessionLocator({
    store: b, ownership: nodeOwnership('node-b', 'b1'), lease: leaseB, nodeId: 'node-b', clock, logger,
    heldEpoch: () => 1, closeMoved: async (id) => { closed.push(id); },
  });
  const request = (headers: Record<string, string>) => ({ method: 'POST', header: (name: string) => headers[name] });
  return { dir, clock, a, b, leaseB, locatorB, closed, open, request, end: async () => { await leaseB.stop(); await a.close(); await b.close(); await removeHome(dir); } };
}

const headers = { authorization: 'Bearer t', 'mcp-session-id': 's-1', 'mcp-protocol-version': '2025-06-18', accept: 'application/json, text/event-stream', 'content-type': 'application/json', cookie: 'not-passed' };

test('no row, or another principal\'s session: missing (404, as on one node)', async () => {
  const s = await setup();
  try {
    assert.equal(await s.locatorB.locate('s-1', alice, s.request(headers), '{}', replyTarget(), false), { kind: 'missing' });
    await s.a.claimSession('s-1', 'token:alice');
    await s.a.saveCheckpoint('s-1', 1, new Uint8Array([1]));
    assert.equal(await s.locatorB.locate('s-1', bob, s.request(headers), '{}', replyTarget(), false), { kind: 'missing' });
  } finally {
    await s.end();
  }
});

test("a home with a fresh lease gets the request, with the client's MCP headers and X-SuperPi-Forwarded-By; its reply is streamed back; a forwarded request is never forwarded again", async () => {
  const s = await setup();
  const home = await startHome();
  try {
    await s.a.renewNode(home.url);
    await s.a.claimSession('s-1', 'token:alice');
    const target = replyTarget();
    const located: Located = await s.locatorB.locate('s-1', alice, s.request(headers), '{"jsonrpc":"2.0"}', target, false);
    assert.equal(located, { kind: 'forwarded' });
    assert.equal([target.status, target.body, target.headers['mcp-session-id']], [200, 'data: one\n\ndata: {"jsonrpc":"2.0"}\n\n', 's-1']);
    const got = home.seen[0] ?? {};
    assert.equal([got.authorization, got['mcp-session-id'], got['mcp-protocol-version'], got.accept, got['content-type'], got[FORWARDED_BY_HEADER], got.cookie],
      ['Bearer t', 's-1', '2025-06-18', 'application/json, text/event-stream', 'application/json', 'node-b', undefined]);
    const again = await s.locatorB.locate('s-1', alice, s.request(headers), '{}', replyTarget(), true);
    assert.is(again.kind, 'unavailable');
    assert.is(home.seen.length, 1, 'the forwarded request went nowhere');
  } finally {
    await home.close();
    await s.end();
  }
});

test('a home whose advertise URL is plain http:// off this machine is not sent the caller\'s bearer token: 503 with why, nothing sent', async () => {
  const s = await setup();
  try {
    // Never contacted: the refusal comes before any connection.
    await s.a.renewNode('http://10.255.255.1:7777');
    await s.a.claimSession('s-1', 'token:alice');
    await s.a.saveCheckpoint('s-1', 1, new Uint8Array([1]));
    const target = replyTarget();
    const located = await s.locatorB.locate('s-1', alice, s.request(headers), '{}', target, false);
    assert.is(located.kind, 'unavailable');
    assert.match(located.kind === 'unavailable' ? located.message : '', 'does not forward a bearer token over plain http:// to 10.255.255.1:7777');
    assert.is(target.status, 0, 'nothing written to the client by a forward');
  } finally {
    await s.end();
  }
});

test('a home forwarded to is remembered while its lease was seen fresh: the next request goes there without reading the store; another principal, or a lease that may have lapsed, reads the store again', async () => {
  const s = await setup();
  const home = await startHome();
  let reads = 0;
  const counted = new Proxy(s.b, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (name === 'loadCheckpoint') reads++;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const locator = new SessionLocator({
    store: counted, ownership: nodeOwnership('node-b', 'b1'), lease: s.leaseB, nodeId: 'node-b', clock: s.clock, logger,
    heldEpoch: () => 1, closeMoved: async () => undefined,
  });
  try {
    await s.a.renewNode(home.url);
    await s.a.claimSession('s-1', 'token:alice');
    await s.a.saveCheckpoint('s-1', 1, new Uint8Array([1]));
    assert.equal(await locator.locate('s-1', alice, s.request(headers), '{}', replyTarget(), false), { kind: 'forwarded' });
    assert.is(reads, 1, 'the first request reads the store');
    assert.equal(await locator.locate('s-1', alice, s.request(headers), '{}', replyTarget(), false), { kind: 'forwarded' });
    assert.is(reads, 1, 'the second is forwarded to the home remembered');
    assert.is(home.seen.length, 2);
    assert.equal(await locator.locate('s-1', bob, s.request(headers), '{}', replyTarget(), false), { kind: 'missing' });
    assert.is(reads, 2, "another principal's request reads the store (and is 404)");
    assert.equal(await locator.locate('s-1', alice, s.request(headers), '{}', replyTarget(), false), { kind: 'forwarded' });
    assert.is(reads, 3, 'the entry another principal met is gone: read again');
    s.clock.advance(LEASE_MS + 1);
    const located = await locator.locate('s-1', alice, s.request(headers), '{}', replyTarget(), false);
    assert.is(reads, 4, 'past the lease seen, the store is read again');
    assert.is(located.kind, 'taken-over', 'and the lapsed home loses the session');
    assert.is(home.seen.length, 3, 'nothing was forwarded to the lapsed home');
  } finally {
    await home.close();
    await s.end();
  }
});

test('a home whose lease lapsed (or that left the registry) loses the session: taken over at the next epoch, with its checkpoint', async () => {
  const s = await setup();
  try {
    await s.a.renewNode('http://127.0.0.1:1');
    await s.a.claimSession('s-1', 'token:alice');
    await s.a.saveCheckpoint('s-1', 1, new Uint8Array([4, 2]));
    s.clock.advance(LEASE_MS + 1);
    const located = await s.locatorB.locate('s-1', alice, s.request(headers), '{}', replyTarget(), false);
    assert.equal(located, { kind: 'taken-over', session: { id: 's-1', epoch: 2, bytes: new Uint8Array([4, 2]) } });
    assert.equal(await s.a.loadCheckpoint('s-1', 'token:alice').then((r) => [r?.owner, r?.epoch]), ['node:v1:["node-b","b1"]', 2]);
    await s.a.claimSession('s-2', 'token:alice');
    await s.a.saveCheckpoint('s-2', 1, new Uint8Array([1]));
    await s.a.forgetNode();
    assert.is((await s.locatorB.locate('s-2', alice, s.request(headers), '{}', replyTarget(), false)).kind, 'taken-over');
  } finally {
    await s.end();
  }
});

test('the node that takes a session over answers the requests that died with the old home before the session is served; if it cannot, the session is still served', async () => {
  const s = await setup();
  const calls: string[] = [];
  let fail = false;
  class Recording extends OrphanRequests {
    override async endOrphans(sessionId: string, principal: string): Promise<number> {
      await new Promise((r) => setTimeout(r, 5));
      calls.push(`${sessionId} ${principal}`);
      if (fail) throw new Error('the store is gone');
      return 1;
    }
  }
  const locator = new SessionLocator({
    store: s.b, ownership: nodeOwnership('node-b', 'b1'), lease: s.leaseB, nodeId: 'node-b', clock: s.clock, logger,
    heldEpoch: () => 1, closeMoved: async () => undefined,
    orphans: new Recording({ store: new Cluster(), clock: s.clock, logger }),
  });
  try {
    await s.a.renewNode('http://127.0.0.1:1');
    for (const id of ['s-1', 's-2']) {
      await s.a.claimSession(id, 'token:alice');
      await s.a.saveCheckpoint(id, 1, new Uint8Array([1]));
    }
    s.clock.advance(LEASE_MS + 1);
    assert.is((await locator.locate('s-1', alice, s.request(headers), '{}', replyTarget(), false)).kind, 'taken-over');
    assert.equal(calls, ['s-1 token:alice'], 'done before locate resolved');
    fail = true;
    assert.is((await locator.locate('s-2', alice, s.request(headers), '{}', replyTarget(), false)).kind, 'taken-over');
    assert.equal(calls, ['s-1 token:alice', 's-2 token:alice']);
  } finally {
    await s.end();
  }
});

test('requests to one node at once for a session whose home lapsed: one takes it over, the others wait until it is open here, then are served from the local copy (never a 404 in between)', async () => {
  const s = await setup();
  try {
    await s.a.renewNode('http://127.0.0.1:1');
    await s.a.claimSession('s-1', 'token:alice');
    await s.a.saveCheckpoint('s-1', 1, new Uint8Array([7]));
    s.clock.advance(LEASE_MS + 1);
    const all = [0, 1, 2, 3].map(() => s.locatorB.locate('s-1', alice, s.request(headers), '{}', replyTarget(), false));
    const settled: Located[] = [];
    for (const p of all) void p.then((l) => settled.push(l));
    // The winner answers; the others are still waiting, as the session is not open here yet.
    while (settled.length === 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(settled.map((l) => l.kind), ['taken-over'], 'only the takeover has answered before the session is open');
    s.locatorB.opened('s-1');
    const kinds = (await Promise.all(all)).map((l) => l.kind).sort();
    assert.equal(kinds, ['missing', 'missing', 'missing', 'taken-over'], 'the rest are served here (missing: look locally)');
    assert.is((await s.a.loadCheckpoint('s-1', 'token:alice'))?.epoch, 2, 'taken over once');
    // Once open, a later request is not held.
    assert.equal(await s.locatorB.locate('s-1', alice, s.request(headers), '{}', replyTarget(), false), { kind: 'missing' });
  } finally {
    await s.end();
  }
});

test('a session of an earlier run of this node is taken over at once, even while that run\'s lease looks fresh', async () => {
  const s = await setup();
  const earlier = s.open('node-b', 'b0');
  try {
    await earlier.renewNode('http://127.0.0.1:1');
    await earlier.claimSession('s-1', 'token:alice');
    await earlier.saveCheckpoint('s-1', 1, new Uint8Array([9]));
    assert.is((await s.locatorB.locate('s-1', alice, s.request(headers), '{}', replyTarget(), false)).kind, 'taken-over');
  } finally {
    await earlier.close();
    await s.end();
  }
});

test('a session claimed but never checkpointed cannot be resumed once its home is gone: missing (the client initializes anew)', async () => {
  const s = await setup();
  try {
    await s.a.claimSession('s-1', 'token:alice');
    assert.equal(await s.locatorB.locate('s-1', alice, s.request(headers), '{}', replyTarget(), false), { kind: 'missing' });
  } finally {
    await s.end();
  }
});

/** Runs `locate` while the fake clock moves on HOME_RETRY_MS at a time; `each` runs at every step. */
async function locateWhileTimePasses(s: Awaited<ReturnType<typeof setup>>, each: () => Promise<void> = async () => undefined): Promise<Located> {
  let done: Located | null = null;
  const located = s.locatorB.locate('s-1', alice, s.request(headers), '{}', replyTarget(), false).then((l) => (done = l));
  for (let i = 0; i < 200 && done === null; i++) {
    await new Promise((r) => setTimeout(r, 5));
    await each();
    s.clock.advance(HOME_RETRY_MS);
  }
  return located;
}

test('a home that cannot be reached while its lease is fresh is waited for, bounded by its lease, then the session is taken over', async () => {
  const s = await setup();
  try {
    // Port 1 on loopback: nothing listens, the connection is refused.
    await s.a.renewNode('http://127.0.0.1:1');
    await s.a.claimSession('s-1', 'token:alice');
    await s.a.saveCheckpoint('s-1', 1, new Uint8Array([1]));
    const located = await locateWhileTimePasses(s);
    assert.is(located.kind, 'taken-over');
    assert.ok(s.clock.now() - 1_000_000 >= LEASE_MS, 'not before the lease lapsed');
  } finally {
    await s.end();
  }
});

test('a home that keeps renewing its lease but cannot be reached: 503 once the wait its lease allowed is over, and the session stays its', async () => {
  const s = await setup();
  try {
    await s.a.renewNode('http://127.0.0.1:1');
    await s.a.claimSession('s-1', 'token:alice');
    await s.a.saveCheckpoint('s-1', 1, new Uint8Array([1]));
    const located = await locateWhileTimePasses(s, () => s.a.renewNode('http://127.0.0.1:1'));
    assert.is(located.kind, 'unavailable');
    assert.match((located as { message: string }).message, /node-a cannot be reached/);
    assert.is((await s.a.loadCheckpoint('s-1', 'token:alice'))?.epoch, 1);
  } finally {
    await s.end();
  }
});

test("a node whose own lease went stale re-validates a session it holds before serving it: still its own → held; moved → its copy closed", async () => {
  const s = await setup();
  try {
    await s.leaseB.start();
    await s.b.claimSession('s-1', 'token:alice');
    assert.is(await s.locatorB.confirmHeld('s-1', alice), 'held', 'lease fresh: no question asked');
    s.clock.advance(LEASE_MS * 2);
    assert.is(s.leaseB.fresh(), false);
    assert.is(await s.locatorB.confirmHeld('s-1', alice), 'held', 're-validated: still epoch 1, still node-b');
    assert.is(s.leaseB.fresh(), true, 'renewed on the way');
    s.clock.advance(LEASE_MS * 2);
    await s.a.takeOverSession('s-1', 'token:alice', 1);
    assert.is(await s.locatorB.confirmHeld('s-1', alice), 'moved');
    assert.equal(s.closed, ['s-1']);
  } finally {
    await s.end();
  }
});

test.run();
