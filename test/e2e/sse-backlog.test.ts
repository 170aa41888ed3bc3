// A GET stream whose client reads nothing is ended past --max-output-backlog-bytes: the server logs the
// warning, cuts the connection, and keeps serving the session (a new GET stream opens, a request is
// answered). Without the bound node:http queues every event written to that stream for as long as the
// client keeps it open: a client could make the server hold any amount of memory by not reading. The
// output is the session's own debug log, flooded as unread-sse.ts describes.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';
import { pollUntil } from '../hang-guard.ts';
import { UNREAD_SSE_TOKEN, UNREAD_SSE_VERSION, type UnreadSse, unreadSse } from './unread-sse.ts';

const BACKLOG = 256 * 1024;
const WARNING = 'SSE stream ended: its client left too much output unread';

const e2e = suite('an SSE stream left unread is ended past the output backlog (--max-output-backlog-bytes)');
let box: Sandbox;
let server: RunningServer;
let sse: UnreadSse;

e2e.before(async () => {
  box = await makeSandbox();
  server = await startHttpServerProcess(box.ws, ['--max-output-backlog-bytes', String(BACKLOG)], { SUPERPI_TOKENS: `${UNREAD_SSE_TOKEN}=alice` });
  sse = unreadSse(server);
});
e2e.after(async () => {
  await server?.stop();
  await box?.cleanup();
});

e2e('a GET stream whose client reads nothing is ended once it holds more than the backlog; the session goes on', async () => {
  const session = await sse.openDebugSession('backlog');

  const stream = await sse.unreadGetStream(session);
  try {
    await sse.flood(session, WARNING);
    await pollUntil('the backlog warning in the log', () => (server.stderr().includes(WARNING) ? true : null), 30_000, 50);
    const line = server.stderr().split('\n').find((l) => l.includes(WARNING)) as string;
    assert.match(line, new RegExp(`"limit":${BACKLOG}`), line);
    const bytes = Number(/"bytes":(\d+)/.exec(line)?.[1]);
    assert.ok(bytes > BACKLOG, line);
    // The client hears its connection end once it reads again.
    stream.socket.resume();
    await stream.closed;
    // The session still serves: a request is answered, and a new GET stream opens.
    const ping = await sse.post(session, { jsonrpc: '2.0', id: 3, method: 'ping' });
    assert.is(ping.status, 200);
    assert.match(await ping.text(), /"id":3/);
    const again = new AbortController();
    const get = await fetch(server.url, { method: 'GET', headers: { accept: 'text/event-stream', authorization: `Bearer ${UNREAD_SSE_TOKEN}`, 'mcp-session-id': session, 'mcp-protocol-version': UNREAD_SSE_VERSION }, signal: again.signal });
    assert.is(get.status, 200);
    again.abort();
    assert.ok(server.child.exitCode === null, 'the server is alive');
  } finally {
    stream.socket.destroy();
  }
});

e2e.run();
