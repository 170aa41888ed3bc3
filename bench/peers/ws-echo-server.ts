// The floor for bench/http.ts's WebSocket measure: a `ws` server that sends every text message back as
// it came, in its own process like the servers measured. Subprotocol "mcp", like super-pi's.
// Usage: tsx bench/peers/ws-echo-server.ts   (prints "WebSocket echo <url>")

import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols: (protocols) => (protocols.has('mcp') ? 'mcp' : false) });
wss.on('connection', (ws) => {
  ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
});
await new Promise<void>((resolve) => wss.once('listening', resolve));
process.stdout.write(`WebSocket echo ws://127.0.0.1:${(wss.address() as AddressInfo).port}/mcp\n`);

const stop = () => {
  for (const ws of wss.clients) ws.terminate();
  wss.close();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
