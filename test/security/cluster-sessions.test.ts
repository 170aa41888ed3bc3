// Threat model rule: on a cluster, a session is its principal's on every node, and no node does for a
// caller what that caller could not do on the session's home. (1) Another principal's session id gets
// "not found" on every node: no request reaches the home for it, and it is never taken over (its row,
// epoch and home stay as they were), even when its home's lease has lapsed. (2) A caller cannot make a
// node relay: a request that carries X-SuperPi-Forwarded-By (forged or real) is never forwarded again.
// (3) A forwarded request carries the caller's own bearer token and the MCP headers only — no cookie, no
// authority of the forwarding node — so the home checks the caller again. (4) The advertise URL every
// node and the database can read never holds credentials.
// Caller classes: token principals and anonymous remote callers (anonymous sessions share one stored
// principal key; the random session id keeps them apart, as on one node). The end-to-end form of rule 1
// through every node is in test/e2e/cluster-sessions.test.ts.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkAdvertiseUrl } from '../../src/cluster/advertise-url.ts';
import { FORWARDED_BY_HEADER, FORWARDED_HEADERS, type ForwardTarget } from '../../src/cluster/forward.ts';
import { NodeLease } from '../../src/cluster/node-lease.ts';
import { SessionLocator, sessionPrincipalKey } from '../../src/cluster/session-locator.ts';
import { createLogger } from '../../src/log/logger.ts';
import { type AsyncConversationStore, SyncStoreAdapter } from '../../src/store/async-store.ts';
import { nodeOwnership } from '../../src/store/node-ownership.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { FakeClock } from '../../src/time/fake-clock.ts';
import { removeHome, tempHome } from '../store/helpers.ts';

const LEASE_MS = 3000;
const logger = createLogger('error', { write: () => true });

function target(): ForwardTarget {
  return { destroyed: false, writeHead: () => undefined, flushHeaders: () => undefined, write: () => undefined, end: () => undefined, on: () => undefined, once: () => undefined };
}

async function world() {
  const dir = await tempHome();
  const clock = new FakeClock(1_000_000);
  const file = path.join(dir, 'cluster.db');
  const open = (node: string): AsyncConversationStore => new SyncStoreAdapter(SqliteConversationStore.open(file, { now: () => clock.now(), ownership: nodeOwnership(node, `${node}-1`), leaseMs: LEASE_MS }));
  const home = open('home');
  const other = open('other');
  const seen: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on('end', () => res.end('{}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  await home.renewNode(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const locator = new SessionLocator({
    store: other, ownership: nodeOwnership('other', 'other-1'), lease: new NodeLease({ store: other, advertiseUrl: 'http://127.0.0.1:1', leaseMs: LEASE_MS, clock, logger }),
    nodeId: 'other', clock, logger, heldEpoch: () => undefined, closeMoved: async () => undefined,
  });
  const request = (headers: Record<string, string>) => ({ method: 'POST', header: (name: string) => headers[name] });
  return {
    clock, home, locator, seen, request,
    end: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await home.close();
      await other.close();
      await removeHome(dir);
    },
  };
}

test("rule 1: another principal's session id is not found on another node, reaches no home, and is not taken over even once its home's lease lapsed", async () => {
  const w = await world();
  try {
    await w.home.claimSession('s-1', sessionPrincipalKey({ kind: 'token', name: 'alice' }));
    await w.home.saveCheckpoint('s-1', 1, new Uint8Array([1]));
    for (const caller of [{ kind: 'token', name: 'bob' } as const, { kind: 'anonymous' } as const]) {
      assert.equal(await w.locator.locate('s-1', caller, w.request({ 'mcp-session-id': 's-1' }), '{}', target(), false), { kind: 'missing' });
    }
    w.clock.advance(LEASE_MS + 1);
    assert.equal(await w.locator.locate('s-1', { kind: 'token', name: 'bob' }, w.request({ 'mcp-session-id': 's-1' }), '{}', target(), false), { kind: 'missing' });
    assert.is(w.seen.length, 0, 'nothing reached the home');
    const row = await w.home.loadCheckpoint('s-1', 'token:alice');
    assert.equal([row?.owner, row?.epoch], ['node:v1:["home","home-1"]', 1]);
  } finally {
    await w.end();
  }
});

test('rule 2: a request carrying X-SuperPi-Forwarded-By is never forwarded, whoever wrote the header', async () => {
  const w = await world();
  try {
    await w.home.claimSession('s-1', 'token:alice');
    const located = await w.locator.locate('s-1', { kind: 'token', name: 'alice' }, w.request({ 'mcp-session-id': 's-1', [FORWARDED_BY_HEADER]: 'forged' }), '{}', target(), true);
    assert.is(located.kind, 'unavailable');
    assert.is(w.seen.length, 0);
  } finally {
    await w.end();
  }
});

test("rule 3: a forwarded request carries the caller's token and the MCP headers only, never a cookie or anything of the forwarding node's", async () => {
  const w = await world();
  try {
    await w.home.claimSession('s-1', 'token:alice');
    const sent = { authorization: 'Bearer alice-token', 'mcp-session-id': 's-1', cookie: 'session=x', 'x-forwarded-for': '10.0.0.9', 'proxy-authorization': 'Basic eA==' };
    assert.equal(await w.locator.locate('s-1', { kind: 'token', name: 'alice' }, w.request(sent), '{}', target(), false), { kind: 'forwarded' });
    const got = w.seen[0] ?? {};
    assert.equal([got.authorization, got['mcp-session-id'], got[FORWARDED_BY_HEADER], got.cookie, got['x-forwarded-for'], got['proxy-authorization']], ['Bearer alice-token', 's-1', 'other', undefined, undefined, undefined]);
    assert.equal([...FORWARDED_HEADERS].sort(), ['accept', 'authorization', 'content-type', 'last-event-id', 'mcp-protocol-version', 'mcp-session-id']);
  } finally {
    await w.end();
  }
});

test('rule 4: an advertise URL with credentials is refused', () => {
  assert.ok('problem' in checkAdvertiseUrl('http://user:secret@10.0.0.5:8080'));
  assert.ok('problem' in checkAdvertiseUrl('http://user@10.0.0.5:8080'));
  assert.equal(checkAdvertiseUrl('http://10.0.0.5:8080/'), { url: 'http://10.0.0.5:8080' });
});

test.run();
