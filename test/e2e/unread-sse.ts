// What the tests of unread SSE output share (sse-backlog, sse-output-budget): a 2025-03-26 session at debug
// level whose own log is the output, a GET stream on a raw socket that is never read, and a flood of stray
// responses (each logged at debug, so sent as notifications/message on that stream; batches of 1,000 with
// 240-character ids, a few hundred bytes out each) until the server logs what the test waits for.

import net from 'node:net';
import * as assert from 'uvu/assert';
import type { RunningServer } from './fixtures.ts';

export const UNREAD_SSE_TOKEN = 'backlog-test-token-0123456789abc';
export const UNREAD_SSE_VERSION = '2025-03-26';

export interface UnreadSse {
  post(session: string | undefined, body: unknown): Promise<Response>;
  /** initialize, initialized, logging/setLevel debug: the session's id. */
  openDebugSession(clientName: string): Promise<string>;
  /** A GET stream on a raw socket, paused: what the server writes piles up in its buffers. */
  unreadGetStream(session: string): Promise<{ socket: net.Socket; closed: Promise<void> }>;
  /** Posts batches of stray responses (at most 400) until the server's stderr holds `until`. */
  flood(session: string, until: string): Promise<void>;
}

export function unreadSse(server: RunningServer): UnreadSse {
  const headers = (session?: string) => ({
    'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${UNREAD_SSE_TOKEN}`,
    ...(session === undefined ? {} : { 'mcp-session-id': session, 'mcp-protocol-version': UNREAD_SSE_VERSION }),
  });
  const post = (session: string | undefined, body: unknown): Promise<Response> => fetch(server.url, { method: 'POST', headers: headers(session), body: JSON.stringify(body) });
  return {
    post,
    async openDebugSession(clientName) {
      const init = await post(undefined, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: UNREAD_SSE_VERSION, capabilities: {}, clientInfo: { name: clientName, version: '1' } } });
      assert.is(init.status, 200);
      await init.text();
      const session = init.headers.get('mcp-session-id') as string;
      assert.ok(session);
      assert.is((await post(session, { jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);
      const level = await post(session, { jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'debug' } });
      assert.is(level.status, 200, await level.text());
      return session;
    },
    async unreadGetStream(session) {
      const url = new URL(server.url);
      const socket = net.connect(Number(url.port), url.hostname);
      await new Promise<void>((resolve, reject) => socket.once('connect', () => resolve()).once('error', reject));
      socket.on('error', () => {});
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.write(`GET /mcp HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${UNREAD_SSE_TOKEN}\r\nMcp-Session-Id: ${session}\r\nMCP-Protocol-Version: ${UNREAD_SSE_VERSION}\r\n\r\n`);
      socket.pause();
      // Let the GET stream open before the output starts.
      await new Promise((r) => setTimeout(r, 300));
      return { socket, closed };
    },
    async flood(session, until) {
      for (let batches = 0; batches < 400 && !server.stderr().includes(until); batches++) {
        const batch = Array.from({ length: 1000 }, (_, i) => ({ jsonrpc: '2.0', id: `${batches}-${i}-`.padEnd(240, 'x'), result: {} }));
        const r = await post(session, batch);
        assert.is(r.status, 202, await r.text());
      }
    },
  };
}
