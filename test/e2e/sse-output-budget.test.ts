// An HTTP connection is held to the node's budget for unread output (--max-node-output-backlog-bytes)
// as a WebSocket is: a GET stream whose client reads nothing, under a per-stream backlog far above the
// budget, is cut once the node's total passes the budget (its connection holds the most), with a warning
// naming the limit; the POSTs that drive it, whose clients read their replies, are never cut, and the
// session goes on. The output is the session's own debug log, flooded as unread-sse.ts describes.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';
import { pollUntil } from '../hang-guard.ts';
import { UNREAD_SSE_TOKEN, type UnreadSse, unreadSse } from './unread-sse.ts';

const BUDGET = 1024 * 1024;
const WARNING = 'HTTP connection closed: the node holds more unread output than its budget';
const PER_STREAM = 'SSE stream ended: its client left too much output unread';

const e2e = suite('an unread SSE stream is cut past the node output budget (--max-node-output-backlog-bytes)');
let box: Sandbox;
let server: RunningServer;
let sse: UnreadSse;

e2e.before(async () => {
  box = await makeSandbox();
  server = await startHttpServerProcess(box.ws, ['--max-node-output-backlog-bytes', String(BUDGET)], { SUPERPI_TOKENS: `${UNREAD_SSE_TOKEN}=alice` });
  sse = unreadSse(server);
});
e2e.after(async () => {
  await server?.stop();
  await box?.cleanup();
});

e2e('a GET stream whose client reads nothing is cut once the node holds more than its budget; the POSTs and the session go on', async () => {
  const session = await sse.openDebugSession('budget');

  const stream = await sse.unreadGetStream(session);
  try {
    await sse.flood(session, WARNING);
    await pollUntil('the budget warning in the log', () => (server.stderr().includes(WARNING) ? true : null), 30_000, 50);
    const lines = server.stderr().split('\n').filter((l) => l.includes(WARNING));
    assert.is(lines.length, 1, 'one connection cut, once');
    const line = lines[0] as string;
    assert.match(line, new RegExp(`"limit":${BUDGET}`), line);
    assert.ok(Number(/"bytes":(\d+)/.exec(line)?.[1]) > 0, line);
    assert.not.ok(server.stderr().includes(PER_STREAM), 'the node budget, not the per-stream backlog, cut it');
    stream.socket.resume();
    await stream.closed;
    const ping = await sse.post(session, { jsonrpc: '2.0', id: 3, method: 'ping' });
    assert.is(ping.status, 200);
    assert.match(await ping.text(), /"id":3/);
    assert.ok(server.child.exitCode === null, 'the server is alive');
  } finally {
    stream.socket.destroy();
  }
});

e2e.run();
