// Streamable HTTP's web-standard entry, `handle(Request)`, on what needs no session: the body size limit
// is enforced while reading (a body past it is never read to its end), and the checks before a session
// (Host, Accept, the session header) answer as the node:http server does.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TokenTable } from '../../src/auth/tokens.ts';
import { createLogger } from '../../src/log/logger.ts';
import type { SessionHost } from '../../src/transports/session-host.ts';
import { DEFAULT_ALLOWED_HOSTS } from '../../src/limits.ts';
import { StreamableHttp } from '../../src/transports/streamable-http.ts';
import { guarded } from '../hang-guard.ts';

const LIMIT = 64;
// Nothing here reaches a session: a host that is asked anything fails the test.
const noHost = new Proxy({}, { get: (_t, name) => { throw new Error(`the session host was asked for ${String(name)}`); } }) as SessionHost;
const http = new StreamableHttp({ sessions: noHost, tokens: new TokenTable(), requireAuth: false, origin: { allowedHosts: DEFAULT_ALLOWED_HOSTS }, maxMessageBytes: LIMIT, logger: createLogger('error') });
const HEADERS = { host: 'localhost', accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

test('a body past the limit is answered 413 without being read to its end (it has none)', async () => {
  let pulled = 0;
  // An endless body: a server that read it to its end before refusing would never answer.
  const endless = new ReadableStream<Uint8Array>({
    // Each chunk a turn of the event loop later, as from a socket (so the hang guard can fire).
    async pull(controller) {
      await new Promise((resolve) => setImmediate(resolve));
      pulled++;
      controller.enqueue(new TextEncoder().encode('{"padding":"xxxxxxxxxxxxxxxxxxxx"}'));
    },
  });
  const response = await guarded(http.handle(new Request('http://localhost/mcp', { method: 'POST', headers: HEADERS, body: endless, duplex: 'half' } as RequestInit)), 'the 413');
  assert.is(response.status, 413);
  assert.match(await response.text(), /Payload Too Large: the limit is 64 bytes/);
  assert.ok(pulled <= 4, `read ${pulled} chunks of an endless body`);
});

test('a Host that is not allowed is 403; a POST without both Accept types is 406; a GET without a session id is 400', async () => {
  const post = (headers: Record<string, string>) => http.handle(new Request('http://localhost/mcp', { method: 'POST', headers, body: '{}' }));
  assert.is((await post({ ...HEADERS, host: 'evil.example' })).status, 403);
  assert.is((await post({ ...HEADERS, accept: 'application/json' })).status, 406);
  const get = await http.handle(new Request('http://localhost/mcp', { method: 'GET', headers: { host: 'localhost', accept: 'text/event-stream' } }));
  assert.is(get.status, 400);
  assert.match(await get.text(), /Mcp-Session-Id header is required/);
  assert.is((await http.handle(new Request('http://localhost/mcp', { method: 'PUT', headers: HEADERS, body: '{}' }))).headers.get('allow'), 'GET, POST, DELETE');
});

test.run();
