// Streamable HTTP's lookup on a cluster (src/cluster/session-locator.ts behind it): a request for a
// session this node does not hold goes to the cluster with its body read once (the 413 limit first), and
// the cluster's answer decides the reply: forwarded (the home's reply was written), unavailable (503),
// missing (404 exactly as on one node). A GET with Last-Event-ID is left to the session events log
// (never forwarded); a request carrying X-SuperPi-Forwarded-By is passed on as forwarded.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TokenTable } from '../../src/auth/tokens.ts';
import type { ClusterSessions, Located } from '../../src/cluster/session-locator.ts';
import { createLogger } from '../../src/log/logger.ts';
import type { SessionHost } from '../../src/transports/session-host.ts';
import { DEFAULT_ALLOWED_HOSTS } from '../../src/limits.ts';
import { StreamableHttp } from '../../src/transports/streamable-http.ts';

const LIMIT = 64;
/** A node that holds no session: `find` answers none; anything else fails the test. */
const empty = new Proxy({}, {
  get: (_t, name) => {
    if (name === 'find') return () => undefined;
    throw new Error(`the session host was asked for ${String(name)}`);
  },
}) as SessionHost;

interface Call {
  id: string;
  body: string | null;
  forwarded: boolean;
}

function node(answer: Located) {
  const calls: Call[] = [];
  const cluster: ClusterSessions = {
    nodeId: 'node-b',
    confirmHeld: async () => { throw new Error('no session is held here'); },
    async locate(id, _principal, _request, body, target, forwarded) {
      calls.push({ id, body, forwarded });
      if (answer.kind === 'forwarded') {
        target.writeHead(200, { 'content-type': 'application/json' });
        target.end('{"from":"home"}');
      }
      return answer;
    },
  };
  const http = new StreamableHttp({ sessions: empty, tokens: new TokenTable(), requireAuth: false, origin: { allowedHosts: DEFAULT_ALLOWED_HOSTS }, maxMessageBytes: LIMIT, logger: createLogger('error'), cluster: () => cluster });
  return { http, calls };
}

const HEADERS = { host: 'localhost', accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-session-id': 's-1', 'mcp-protocol-version': '2025-06-18' };
const post = (http: StreamableHttp, body: string, extra: Record<string, string> = {}) => http.handle(new Request('http://localhost/mcp', { method: 'POST', headers: { ...HEADERS, ...extra }, body }));

test("a POST for a session not held here goes to the cluster with its body; the home's reply is the reply", async () => {
  const { http, calls } = node({ kind: 'forwarded' });
  const r = await post(http, '{"jsonrpc":"2.0","id":1,"method":"ping"}');
  assert.equal([r.status, await r.text()], [200, '{"from":"home"}']);
  assert.equal(calls, [{ id: 's-1', body: '{"jsonrpc":"2.0","id":1,"method":"ping"}', forwarded: false }]);
});

test('a request carrying X-SuperPi-Forwarded-By is located as forwarded (the cluster never forwards it again)', async () => {
  const { http, calls } = node({ kind: 'unavailable', message: 'the session moved while this request was being forwarded to it; retry' });
  const r = await post(http, '{}', { 'x-superpi-forwarded-by': 'node-a' });
  assert.is(r.status, 503);
  assert.match(await r.text(), 'Service Unavailable: the session moved while this request was being forwarded to it; retry');
  assert.is(calls[0]?.forwarded, true);
});

test('a session the cluster does not know is 404, exactly as on one node', async () => {
  const { http } = node({ kind: 'missing' });
  const r = await post(http, '{"jsonrpc":"2.0","id":1,"method":"ping"}');
  assert.is(r.status, 404);
  assert.match(await r.text(), 'Not Found: unknown or ended session; initialize a new one');
});

test('a body past the limit is 413 before the cluster is asked; a GET with Last-Event-ID is not the cluster\'s (the events log serves it)', async () => {
  const { http, calls } = node({ kind: 'forwarded' });
  assert.is((await post(http, `{"padding":"${'x'.repeat(LIMIT)}"}`)).status, 413);
  const get = await http.handle(new Request('http://localhost/mcp', { method: 'GET', headers: { ...HEADERS, accept: 'text/event-stream', 'last-event-id': '7' } }));
  assert.is(get.status, 404);
  assert.equal(calls, []);
});

test.run();
