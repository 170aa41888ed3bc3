// Fuzz, the HTTP front door: generated request lines (every target form, garbage, `http://`, `http://[`,
// very long), headers (Host, Origin, Upgrade and Sec-WebSocket-*, Content-Length and Transfer-Encoding in
// conflict), the 2026-07-28 headers that repeat the body (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
// with raw bytes, repeated, folded or oversized: values a fetch client cannot send) over a 2026-07-28 body,
// and WebSocket upgrades with bad targets, written raw on a socket to the real server process.
// After every case the server still answers /health and an MCP ping, and its log never shows the
// uncaught-failure policy (src/cli/last-resort.ts): no event callback let anything escape.

import { connect } from 'node:net';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { UNCAUGHT_MESSAGE } from '../../src/cli/last-resort.ts';
import { makeSandbox } from './fixtures.ts';
import { startFuzzServer } from './fuzz.ts';

const SEED = 2222;
const RUNS = 150;
/** How long one raw exchange may take before the test stops reading (the server may keep the socket open). */
const EXCHANGE_MS = 1500;

/** Writes `bytes` on a fresh socket and reads until the server closes it or EXCHANGE_MS pass. */
function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(got);
    };
    const timer = setTimeout(done, EXCHANGE_MS);
    socket.on('connect', () => socket.write(bytes, 'latin1'));
    socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
    socket.on('close', done);
    socket.on('error', done);
  });
}

const targets = fc.oneof(
  fc.constantFrom('/mcp', '/health', '/', '*', 'http://', 'http://[', 'http://[::1', 'https://', 'http://%zz/', 'http://a b/mcp', 'http://127.0.0.1/mcp', 'http://localhost:99999/mcp',
    'example.com:443', '127.0.0.1:80', '//', '//mcp', '/mcp?x=%', '%', '?', '#', 'mcp', 'ws://127.0.0.1/mcp', 'file:///etc/passwd', 'http://user:pw@127.0.0.1/mcp', 'javascript:alert(1)'),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(10, 9000, 70_000).map((n) => `/mcp?${'a'.repeat(n)}`),
  fc.constantFrom(9000, 70_000).map((n) => `http://${'h'.repeat(n)}`),
);
const methods = fc.oneof(fc.constantFrom('GET', 'POST', 'DELETE', 'OPTIONS', 'PUT', 'HEAD', 'CONNECT', 'PRI', 'TRACE'), fc.stringMatching(/^[A-Za-z!#-]{0,12}$/));
const versions = fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1 x', 'HTTP/9', '');

function headerArb(port: number): fc.Arbitrary<string[]> {
  const own = `127.0.0.1:${port}`;
  return fc.record({
    host: fc.option(fc.constantFrom(own, 'localhost', `localhost:${port}`, '[::1]', 'evil.example', '', '[', `${own}, ${own}`, 'h'.repeat(5000)), { nil: undefined }),
    origin: fc.option(fc.constantFrom(`http://${own}`, `http://localhost:${port + 1}`, 'null', 'http://[', 'garbage', 'http://127.0.0.1', `https://${own}`), { nil: undefined }),
    upgrade: fc.option(fc.constantFrom('websocket', 'WebSocket', 'h2c', ''), { nil: undefined }),
    connection: fc.option(fc.constantFrom('Upgrade', 'keep-alive, Upgrade', 'close'), { nil: undefined }),
    wsKey: fc.option(fc.constantFrom('dGhlIHNhbXBsZSBub25jZQ==', '', 'short', '!!!!'), { nil: undefined }),
    wsVersion: fc.option(fc.constantFrom('13', '8', 'x', ''), { nil: undefined }),
    wsProtocol: fc.option(fc.constantFrom('mcp', 'chat', 'mcp, chat', ''), { nil: undefined }),
    length: fc.option(fc.constantFrom('0', '5', '-1', '99999999999999999999', 'abc', '5, 6', AUTO_LENGTH, AUTO_LENGTH), { nil: undefined }),
    json: fc.boolean(),
    chunked: fc.boolean(),
    modern: modernHeaders(4),
    extra: fc.array(fc.string({ maxLength: 30 }), { maxLength: 2 }),
  }).map((h) => [
    ...(h.host === undefined ? [] : [`Host: ${h.host}`]),
    ...(h.origin === undefined ? [] : [`Origin: ${h.origin}`]),
    ...(h.upgrade === undefined ? [] : [`Upgrade: ${h.upgrade}`]),
    ...(h.connection === undefined ? [] : [`Connection: ${h.connection}`]),
    ...(h.wsKey === undefined ? [] : [`Sec-WebSocket-Key: ${h.wsKey}`]),
    ...(h.wsVersion === undefined ? [] : [`Sec-WebSocket-Version: ${h.wsVersion}`]),
    ...(h.wsProtocol === undefined ? [] : [`Sec-WebSocket-Protocol: ${h.wsProtocol}`]),
    ...(h.length === undefined ? [] : [`Content-Length: ${h.length}`]),
    ...(h.json ? ['Content-Type: application/json', 'Accept: application/json, text/event-stream'] : []),
    ...(h.chunked ? ['Transfer-Encoding: chunked'] : []),
    ...h.modern.map(([name, value]) => `${name}: ${value}`),
    ...h.extra,
  ]);
}

interface Case {
  readonly method: string;
  readonly target: string;
  readonly version: string;
  readonly headers: readonly string[];
  readonly body: string;
}

/** `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` lines (any case, repeated or not) with right, wrong and raw-byte values. */
function modernHeaders(maxLength: number): fc.Arbitrary<[string, string][]> {
  return fc.array(fc.tuple(
    fc.constantFrom('MCP-Protocol-Version', 'Mcp-Method', 'Mcp-Name', 'mcp-name', 'MCP-PROTOCOL-VERSION'),
    fc.oneof(
      fc.constantFrom('2026-07-28', '2025-06-18', 'tools/call', 'server/discover', 'read', 'bash', '=?base64?cmVhZA==?=', '=?base64?/w==?=', '=?base64?!?=', ' read ', '\xff\xfe', 'r\x00ead', 'n'.repeat(9000)),
      fc.string({ unit: 'binary', maxLength: 20 }),
    ),
  ), { maxLength });
}

/** The headers a 2026-07-28 body implies, for MODERN_BODIES (the tools/call one names `read`). */
function rightHeaders(body: string): [string, string][] {
  const call = body.includes('"tools/call"');
  return [['MCP-Protocol-Version', '2026-07-28'], ['Mcp-Method', call ? 'tools/call' : 'server/discover'], ...(call ? [['Mcp-Name', 'read'] as [string, string]] : [])];
}

/** A header value: visible ASCII, obs-text bytes (0x80-0xff, which HTTP allows and fetch cannot send), or a known right or wrong one. */
const headerValue = fc.oneof(
  fc.constantFrom('2026-07-28', '2025-06-18', 'tools/call', 'server/discover', 'read', 'bash', '=?base64?cmVhZA==?=', '=?base64?/w==?=', '=?base64?!?=', ' read ', 're\xe4d', '\xff\xfe', 'n'.repeat(9000)),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 8 }),
);

/**
 * A 2026-07-28 POST that reaches the header checks (the right target, Host, length and media types): the
 * headers its body implies, then up to three edits (one dropped, its value replaced, a line repeated,
 * its name in another case). The general cases above seldom get so far.
 */
function modernPostArb(port: number): fc.Arbitrary<Case> {
  const edit = fc.tuple(fc.constantFrom('drop', 'replace', 'repeat', 'case'), fc.nat(), headerValue);
  return fc.record({ body: fc.constantFrom(...MODERN_BODIES), edits: fc.array(edit, { maxLength: 3 }) }).map(({ body, edits }) => {
    const lines = rightHeaders(body);
    for (const [kind, at, value] of edits) {
      if (lines.length === 0) break;
      const i = at % lines.length;
      const [name, old] = lines[i] as [string, string];
      if (kind === 'drop') lines.splice(i, 1);
      else if (kind === 'replace') lines[i] = [name, value];
      else if (kind === 'repeat') lines.push([name, value]);
      else lines[i] = [name.toUpperCase(), old];
    }
    return {
      method: 'POST', target: '/mcp', version: 'HTTP/1.1', body,
      headers: [`Host: 127.0.0.1:${port}`, 'Content-Type: application/json', 'Accept: application/json, text/event-stream', 'Connection: close', `Content-Length: ${AUTO_LENGTH}`, ...lines.map(([name, v]) => `${name}: ${v}`)],
    };
  });
}

function requestArb(port: number): fc.Arbitrary<Case> {
  const general = fc.record({ method: methods, target: targets, version: versions, headers: headerArb(port), body: fc.oneof(fc.constant(''), fc.string({ maxLength: 30 }), fc.constant('5\r\nhello\r\n0\r\n\r\n'), fc.constantFrom(...MODERN_BODIES)) });
  return fc.oneof({ arbitrary: general, weight: 3 }, { arbitrary: modernPostArb(port), weight: 1 });
}

/** 2026-07-28 bodies the modern headers above repeat (or not): only read-only tools, never a command. */
const MODERN_BODIES = ['server/discover', 'tools/call'].map((method) => JSON.stringify({
  jsonrpc: '2.0', id: 7, method,
  params: { ...(method === 'tools/call' ? { name: 'read', arguments: { path: 'README.md' } } : {}), _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } },
}));

/** A Content-Length the case's own body has (so a POST's body is read, and its headers checked against it). */
const AUTO_LENGTH = 'auto';

function bytesOf(c: Case): string {
  const length = String(Buffer.byteLength(c.body, 'latin1'));
  return `${c.method} ${c.target} ${c.version}\r\n${c.headers.map((h) => `${h.replace(`: ${AUTO_LENGTH}`, `: ${length}`)}\r\n`).join('')}\r\n${c.body}`;
}

/** The cases that ended the process before the fix, always run first. */
function regressions(port: number): [Case][] {
  const upgrade = [`Host: 127.0.0.1:${port}`, 'Upgrade: websocket', 'Connection: Upgrade', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Protocol: mcp'];
  return [
    [{ method: 'GET', target: 'http://', version: 'HTTP/1.1', headers: [`Host: 127.0.0.1:${port}`], body: '' }],
    [{ method: 'POST', target: 'http://[', version: 'HTTP/1.1', headers: [`Host: 127.0.0.1:${port}`, 'Content-Length: 0'], body: '' }],
    [{ method: 'GET', target: 'http://', version: 'HTTP/1.1', headers: upgrade, body: '' }],
    [{ method: 'GET', target: 'http://[::1', version: 'HTTP/1.1', headers: upgrade, body: '' }],
  ];
}

test(`an unparseable request target is 400 (request and upgrade); then ${RUNS} generated request lines, headers and upgrades over raw sockets: after each the server answers /health and an MCP ping, and nothing reached the uncaught-failure policy (seed ${SEED})`, async () => {
  const box = await makeSandbox();
  const server = await startFuzzServer(box.ws);
  const port = Number(new URL(server.url).port);
  try {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
    const init = await fetch(server.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } }) });
    assert.is(init.status, 200, await init.text());
    const session = { ...headers, 'mcp-session-id': init.headers.get('mcp-session-id') as string };
    // The answers the fix gives, beyond surviving: the caller's mistake is a 400, over HTTP and on an upgrade.
    const own = `Host: 127.0.0.1:${port}`;
    assert.match(await rawExchange(port, `GET http:// HTTP/1.1\r\n${own}\r\n\r\n`), /^HTTP\/1\.1 400 /);
    assert.match(await rawExchange(port, `POST http://[ HTTP/1.1\r\n${own}\r\nContent-Length: 0\r\n\r\n`), /^HTTP\/1\.1 400 /);
    assert.match(await rawExchange(port, `GET http:// HTTP/1.1\r\n${own}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mcp\r\n\r\n`), /^HTTP\/1\.1 400 /);
    assert.match(await rawExchange(port, `GET /elsewhere HTTP/1.1\r\n${own}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`), /^HTTP\/1\.1 404 /);
    let pingId = 100;
    const stillServing = async (c: Case): Promise<void> => {
      const seen = `after ${JSON.stringify(bytesOf(c).slice(0, 300))}; stderr: ${server.stderr().slice(-1500)}`;
      assert.is(server.child.exitCode, null, `the server exited ${seen}`);
      const health = await fetch(server.url.replace(/\/mcp$/, '/health'), { signal: AbortSignal.timeout(10_000) });
      assert.is(health.status, 200, `/health ${seen}`);
      const id = pingId++;
      const ping = await fetch(server.url, { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }), signal: AbortSignal.timeout(10_000) });
      assert.match(await ping.text(), `"id":${id},"result":{}`, `ping ${seen}`);
      assert.not.ok(server.stderr().includes(UNCAUGHT_MESSAGE), `the uncaught-failure policy ran ${seen}`);
    };
    await fc.assert(fc.asyncProperty(requestArb(port), async (c) => {
      await rawExchange(port, bytesOf(c));
      await stillServing(c);
    }), { seed: SEED, numRuns: RUNS, examples: regressions(port), endOnFailure: true });
  } finally {
    await server.stop();
    await box.cleanup();
  }
});

test.run();
