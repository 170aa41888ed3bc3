// The floor for bench/stdio.ts: newline-delimited JSON-RPC over stdin/stdout with no framework — what
// Node itself allows. It answers `initialize`, `ping` and `tools/call` of `read` (the file read on every
// call, synchronously: for a small file one readFileSync costs less than the four thread-pool round
// trips of an async readFile); notifications get no reply, anything else is -32601.
// With --thread, every request line crosses to one worker thread and its reply line comes back (parse,
// read and serialize happen there), so the floor pays the one crossing each way that a server with its
// sessions on other threads pays.
// Plain JavaScript so `node` runs it directly.
// Usage: node bench/peers/stdio-floor-server.mjs --workspace DIR [--thread]

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

const INITIALIZE_RESULT = {
  protocolVersion: '2025-06-18',
  capabilities: { tools: { listChanged: false } },
  serverInfo: { name: 'stdio-floor', version: '1.0.0' },
};

/** One request line → its reply line, or null for a notification. */
function answer(workspace, line) {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
  }
  if (msg.id === undefined) return null;
  const reply = (result) => JSON.stringify({ jsonrpc: '2.0', id: msg.id, result });
  switch (msg.method) {
    case 'initialize':
      return reply(msg.params?.protocolVersion ? { ...INITIALIZE_RESULT, protocolVersion: msg.params.protocolVersion } : INITIALIZE_RESULT);
    case 'ping':
      return reply({});
    case 'tools/call': {
      if (msg.params?.name !== 'read') break;
      try {
        const text = readFileSync(path.resolve(workspace, String(msg.params.arguments?.path)), 'utf8');
        return reply({ content: [{ type: 'text', text }] });
      } catch (err) {
        return reply({ content: [{ type: 'text', text: err.message }], isError: true });
      }
    }
  }
  return JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `Method not found: ${msg.method}` } });
}

if (isMainThread) {
  const { values } = parseArgs({ options: { workspace: { type: 'string' }, thread: { type: 'boolean' } } });
  const workspace = path.resolve(values.workspace ?? process.cwd());
  // Requests in flight: when stdin ends, the process exits once they are answered.
  let inFlight = 0;
  let ended = false;
  const settle = () => {
    if (ended && inFlight === 0) process.exit(0);
  };
  const send = (line) => {
    if (line !== null) process.stdout.write(`${line}\n`);
    inFlight--;
    settle();
  };
  let handle = (line) => send(answer(workspace, line));
  if (values.thread) {
    const worker = new Worker(new URL(import.meta.url), { workerData: { workspace } });
    worker.on('message', send);
    worker.on('error', (err) => {
      process.stderr.write(`stdio floor: worker: ${err.stack ?? err}\n`);
      process.exit(1);
    });
    handle = (line) => worker.postMessage(line);
  }
  let pending = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    pending += chunk;
    let start = 0;
    for (let nl = pending.indexOf('\n'); nl !== -1; nl = pending.indexOf('\n', start)) {
      const line = pending.slice(start, nl).trim();
      start = nl + 1;
      if (line === '') continue;
      inFlight++;
      handle(line);
    }
    pending = pending.slice(start);
  });
  process.stdin.on('end', () => {
    ended = true;
    settle();
  });
} else {
  parentPort.on('message', (line) => {
    // Every line gets a message back (null for a notification), so the main thread can count.
    parentPort.postMessage(answer(workerData.workspace, line));
  });
}
