// The floor for bench/http.ts's Streamable HTTP measure: plain node:http speaking just enough of the
// protocol for the bench client — initialize answered with an Mcp-Session-Id, notifications with 202,
// every other request with one SSE event carrying the same `read` result — with no MCP machinery, no
// session state and no file system access (the file is read once, at start). What the same client gets
// from a server that does almost nothing: the ceiling of any ratio measured with it on this machine.
// Usage: tsx bench/peers/http-floor-server.ts --workspace DIR --file a.txt   (prints "HTTP floor <url>")

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { workspace: { type: 'string' }, file: { type: 'string' } } });
const text = readFileSync(path.resolve(values.workspace ?? process.cwd(), values.file ?? 'a.txt'), 'utf8');

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.method !== 'POST') return void res.writeHead(200).end();
    const msg = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: number | string; method?: string };
    if (msg.method === 'initialize') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Mcp-Session-Id': randomUUID() });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'http-floor', version: '1.0.0' } } }));
      return;
    }
    if (msg.id === undefined) return void res.writeHead(202).end();
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', 'Mcp-Session-Id': String(req.headers['mcp-session-id']) });
    res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text }] } })}\n\n`);
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
process.stdout.write(`HTTP floor http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp\n`);

const stop = () => {
  server.close();
  server.closeAllConnections();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
