// The peer for bench/http.ts: a stateful Streamable HTTP server built with the official SDK the way its
// own example (examples/server/simpleStreamableHttp) builds one — one McpServer and one
// StreamableHTTPServerTransport per session (sessionIdGenerator: randomUUID, onsessioninitialized
// storing the transport in a map, requests routed by Mcp-Session-Id) — on plain node:http instead of
// express (a body parsed here stands in for express.json(); less work than express, so the comparison
// does not flatter super-pi). One tool, `read`: the text of a file in the workspace.
// Usage: tsx bench/peers/sdk-http-server.ts --workspace DIR   (prints "SDK Streamable HTTP <url>")

import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';

const { values } = parseArgs({ options: { workspace: { type: 'string' } } });
const workspace = path.resolve(values.workspace ?? process.cwd());

function newServer(): McpServer {
  const server = new McpServer({ name: 'sdk-peer', version: '1.0.0' });
  server.registerTool('read', {
    title: 'Read',
    description: 'Read a text file of the workspace',
    inputSchema: { path: z.string().describe('Path relative to the workspace') },
    annotations: { readOnlyHint: true, idempotentHint: true },
  }, async ({ path: file }) => {
    try {
      return { content: [{ type: 'text' as const, text: await readFile(path.resolve(workspace, file), 'utf8') }] };
    } catch (err) {
      return { content: [{ type: 'text' as const, text: (err as Error).message }], isError: true };
    }
  });
  return server;
}

const transports = new Map<string, StreamableHTTPServerTransport>();

const jsonError = (res: ServerResponse, status: number, code: number, message: string) => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
};

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch (err) {
        reject(err);
      }
    });
    req.on('error', reject);
  });
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname === '/health') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ status: 'ok', sessions: transports.size }));
    return;
  }
  if (url.pathname !== '/mcp') return jsonError(res, 404, -32000, 'Not Found');
  const header = req.headers['mcp-session-id'];
  const sessionId = Array.isArray(header) ? header[0] : header;
  if (req.method === 'POST') {
    let body: unknown;
    try {
      body = await readJson(req);
    } catch {
      return jsonError(res, 400, -32700, 'Parse error');
    }
    const existing = sessionId ? transports.get(sessionId) : undefined;
    if (existing) return existing.handleRequest(req, res, body);
    if (sessionId) return jsonError(res, 404, -32001, 'Session not found');
    if (!isInitializeRequest(body)) return jsonError(res, 400, -32000, 'Bad Request: No valid session ID provided');
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        transports.set(id, transport);
      },
    });
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id) transports.delete(id);
    };
    await newServer().connect(transport);
    return transport.handleRequest(req, res, body);
  }
  if (req.method === 'GET' || req.method === 'DELETE') {
    const transport = sessionId ? transports.get(sessionId) : undefined;
    if (!transport) return jsonError(res, sessionId ? 404 : 400, -32001, 'Session not found');
    return transport.handleRequest(req, res);
  }
  res.writeHead(405, { Allow: 'GET, POST, DELETE' }).end();
}

const http = createServer((req, res) => {
  handle(req, res).catch((err: unknown) => {
    process.stderr.write(`sdk peer: ${(err as Error).stack ?? String(err)}\n`);
    if (!res.headersSent) jsonError(res, 500, -32603, 'Internal server error');
    else res.end();
  });
});

await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
process.stdout.write(`SDK Streamable HTTP http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp\n`);

const stop = async () => {
  http.close();
  await Promise.all([...transports.values()].map((t) => t.close().catch(() => undefined)));
  http.closeAllConnections();
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
