// What OAuth costs on the hot path: HTTP `tools/call read` throughput with a JWT access token on every
// request vs a static bearer token, against one super-pi process in the same run, in interleaved blocks
// (static, JWT, JWT, static: a linear drift cancels). Target (issue 28): JWT ≥ 0.9× static. The issuer
// is a loopback server publishing one ES256 key; the token is verified once and then remembered by its
// digest until it expires, so each request costs a hash and a map lookup.
// Usage: npm run build && npx tsx bench/oauth.ts. Writes bench/results/oauth.md.

import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLoopbackIssuer } from '../test/auth/issuer-fixture.ts';
import { makeSandbox, startHttpServerProcess } from '../test/e2e/fixtures.ts';

/** Sessions per kind driving the server at once. */
export const SESSIONS = 8;
/** One block's length; blocks alternate static, JWT, JWT, static. */
export const BLOCK_MS = 3000;
/** ABBA rounds. */
export const ROUNDS = 3;
/** JWT throughput ÷ static-token throughput must stay at or above this. */
export const TARGET = 0.9;

const STATIC = 'bench-static-token-0123456789';
const here = path.dirname(fileURLToPath(import.meta.url));
const ACCEPT = 'application/json, text/event-stream';

async function post(url: string, headers: Record<string, string>, body: unknown): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { accept: ACCEPT, 'content-type': 'application/json', 'mcp-protocol-version': '2025-06-18', ...headers }, body: JSON.stringify(body) });
}

async function openSession(url: string, authorization: string): Promise<Record<string, string>> {
  const res = await post(url, { authorization }, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench-oauth', version: '1' } } });
  await res.text();
  const id = res.headers.get('mcp-session-id');
  if (res.status !== 200 || id === null) throw new Error(`initialize: HTTP ${res.status}`);
  const headers = { authorization, 'mcp-session-id': id };
  await (await post(url, headers, { jsonrpc: '2.0', method: 'notifications/initialized' })).text();
  return headers;
}

/** Calls completed by all sessions in one block of BLOCK_MS. */
async function block(url: string, sessions: Record<string, string>[]): Promise<number> {
  const end = Date.now() + BLOCK_MS;
  let done = 0;
  await Promise.all(sessions.map(async (headers) => {
    let id = 1;
    while (Date.now() < end) {
      const res = await post(url, headers, { jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name: 'read', arguments: { path: 'src/greet.ts' } } });
      const text = await res.text();
      if (res.status !== 200 || !text.includes('hello')) throw new Error(`read: HTTP ${res.status}: ${text.slice(0, 200)}`);
      done++;
    }
  }));
  return done;
}

async function main(): Promise<void> {
  const box = await makeSandbox();
  // The resource is the server's URL, known once it runs: each token names it (`aud`).
  const issuer = await startLoopbackIssuer('');
  const server = await startHttpServerProcess(box.ws, ['--oauth-issuer', issuer.issuer], { SUPERPI_TOKENS: `${STATIC}=bench` });
  try {
    const jwt = await issuer.token('bench', 'mcp:read', {}, { aud: server.url, exp: Math.floor(Date.now() / 1000) + 3600 });
    const staticSessions = await Promise.all(Array.from({ length: SESSIONS }, () => openSession(server.url, `Bearer ${STATIC}`)));
    const jwtSessions = await Promise.all(Array.from({ length: SESSIONS }, () => openSession(server.url, `Bearer ${jwt}`)));
    await block(server.url, staticSessions); // warm-up
    await block(server.url, jwtSessions);
    const rows: string[] = [];
    let staticTotal = 0;
    let jwtTotal = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      const a1 = await block(server.url, staticSessions);
      const b1 = await block(server.url, jwtSessions);
      const b2 = await block(server.url, jwtSessions);
      const a2 = await block(server.url, staticSessions);
      staticTotal += a1 + a2;
      jwtTotal += b1 + b2;
      rows.push(`| ${round} | ${((a1 + a2) / (2 * BLOCK_MS / 1000)).toFixed(0)} | ${((b1 + b2) / (2 * BLOCK_MS / 1000)).toFixed(0)} | ${((b1 + b2) / (a1 + a2)).toFixed(3)} |`);
    }
    const ratio = jwtTotal / staticTotal;
    const report = [
      '# OAuth access tokens vs static tokens: HTTP read throughput', '',
      `${SESSIONS} sessions per kind, closed loop of tools/call read, blocks of ${BLOCK_MS} ms in ABBA order, ${ROUNDS} rounds, one server; load average before ${os.loadavg()[0]?.toFixed(2)}; ${os.cpus().length} cores.`, '',
      '| round | static calls/s | JWT calls/s | JWT ÷ static |', '|---|---|---|---|', ...rows, '',
      `Overall JWT ÷ static: **${ratio.toFixed(3)}** (target ≥ ${TARGET}): ${ratio >= TARGET ? 'met' : 'NOT met'}.`, '',
    ].join('\n');
    process.stdout.write(`${report}\n`);
    await writeFile(path.join(here, 'results', 'oauth.md'), report);
  } finally {
    await server.stop();
    await issuer.close();
  }
}

await main();
