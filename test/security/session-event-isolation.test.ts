// Threat model rule: a session's server-to-client messages reach its own principal only. On a PostgreSQL
// store they are kept in the session event log so that a client may resume a stream on any node (GET
// with Last-Event-ID, issue 14) — on a node that does not hold the session, so the registry's check does
// not apply there: the log's own principal is checked instead. Another principal, or an anonymous caller,
// who names the session's id and an event id gets byte for byte the answer a session that does not exist
// gets (404), and no event; the owner gets them. The store's half (its SQL compares the principal) is
// checked in test/store/session-events.test.ts, end to end on two nodes in test/e2e/cluster-events.test.ts.
// Caller classes: token principals and anonymous remote callers (who may learn or guess a session id).

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TokenTable } from '../../src/auth/tokens.ts';
import { createLogger } from '../../src/log/logger.ts';
import { SessionEventFeed } from '../../src/store/session-event-feed.ts';
import type { SessionHost } from '../../src/transports/session-host.ts';
import { StreamableHttp } from '../../src/transports/streamable-http.ts';
import { DEFAULT_ALLOWED_HOSTS } from '../../src/limits.ts';
import { guarded } from '../hang-guard.ts';
import { sseReader } from '../e2e/sse-reader.ts';
import { MemoryLog } from '../transports/memory-event-log.ts';

const holdsNothing = new Proxy({}, {
  get: (_t, name) => {
    if (name === 'find') return () => undefined;
    throw new Error(`the session host was asked for ${String(name)}`);
  },
}) as SessionHost;

test('another principal or an anonymous caller resuming a session\'s stream gets what a session that does not exist gets, and no event', async () => {
  const log = new MemoryLog();
  const feed = new SessionEventFeed(log, { transcriptChanged: () => undefined, onError: (what, error) => { throw new Error(`${what}: ${error.message}`); } });
  const tokens = new TokenTable();
  tokens.add('alice-token-123', 'alice');
  tokens.add('bob-token-4567', 'bob');
  const http = new StreamableHttp({ sessions: holdsNothing, tokens, requireAuth: false, origin: { allowedHosts: DEFAULT_ALLOWED_HOSTS }, maxMessageBytes: 1024, logger: createLogger('error'), events: feed });
  await log.appendSessionEvent('alices-session', 'token:alice', 'request:n:2', '');
  await log.appendSessionEvent('alices-session', 'token:alice', 'request:n:2', '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"secret"}]}}', true);
  const resume = async (session: string, authorization?: string) => {
    const res = await http.handle(new Request('http://localhost/mcp', {
      method: 'GET',
      headers: { host: 'localhost', accept: 'text/event-stream', 'mcp-session-id': session, 'last-event-id': '1', ...(authorization ? { authorization } : {}) },
    }));
    return { status: res.status, body: await guarded(res.text(), 'the answer') };
  };
  const missing = await resume('no-such-session', 'Bearer bob-token-4567');
  assert.is(missing.status, 404);
  assert.equal(await resume('alices-session', 'Bearer bob-token-4567'), missing, 'another token principal');
  assert.equal(await resume('alices-session'), missing, 'an anonymous caller');
  const owner = await http.handle(new Request('http://localhost/mcp', {
    method: 'GET', headers: { host: 'localhost', accept: 'text/event-stream', 'mcp-session-id': 'alices-session', 'last-event-id': '1', authorization: 'Bearer alice-token-123' },
  }));
  assert.is(owner.status, 200);
  const events = await guarded(sseReader(owner.body as ReadableStream<Uint8Array>).rest(), 'the owner\'s events');
  assert.equal(events.map((e) => e.id), ['2']);
  await feed.close();
});

test.run();
