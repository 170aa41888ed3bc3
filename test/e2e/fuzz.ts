// Shared by the per-transport fuzz runs: a seeded generator of hostile and ordinary JSON-RPC traffic,
// the real server process (`node bin/super-pi.js`, the dist bundle) on 127.0.0.1, and its RSS.
// Seeded, so a failure can be replayed: the seed is printed by each run and can be set with FUZZ_SEED.

import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot } from './fixtures.ts';

/** Messages per fuzz run, per transport (issue 10). */
export const FUZZ_MESSAGES = 10_000;
/**
 * A server that has absorbed a fuzz run must stay below this resident size. Generous on purpose (an idle
 * server is ~100-150 MB with its worker threads): it catches leaks per message, not noise.
 */
export const FUZZ_RSS_LIMIT_BYTES = 600 * 1024 * 1024;

export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);

/** mulberry32: small, fast, good enough to pick fuzz cases, and replayable from its seed. */
export class Rng {
  #s: number;
  constructor(seed: number) {
    this.#s = seed >>> 0;
  }
  next(): number {
    this.#s = (this.#s + 0x6d2b79f5) >>> 0;
    let t = this.#s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** Every own key of Object.prototype, and more names a table keyed by input could trip on. */
const PROTOTYPE_NAMES = [...Object.getOwnPropertyNames(Object.prototype), 'prototype', 'constructor.prototype', '__proto__'];
const METHODS = [
  'initialize', 'ping', 'tools/list', 'tools/call', 'resources/list', 'resources/read', 'resources/templates/list',
  'resources/subscribe', 'resources/unsubscribe', 'prompts/list', 'prompts/get', 'completion/complete', 'logging/setLevel',
  'notifications/initialized', 'notifications/cancelled', 'notifications/progress', 'notifications/roots/list_changed',
];
/** Tools that only read: a fuzz run must not run commands or write in the workspace. */
const READ_TOOLS = ['read', 'ls', 'find', 'grep'];
const PATHS = ['README.md', 'src', 'src/greet.ts', '.', '..', '../outside/secret.txt', '/etc/passwd', 'no-such-file', 'a.txt/', '\u0000', 'src/../../x', ''];
const VERSIONS = ['2025-06-18', '2025-03-26', '2024-11-05', '1999-01-01', ''];

function randomString(rng: Rng, max = 24): string {
  const n = rng.int(max);
  let s = '';
  for (let i = 0; i < n; i++) {
    const r = rng.next();
    s += r < 0.7 ? String.fromCharCode(0x20 + rng.int(95)) : r < 0.9 ? String.fromCharCode(rng.int(0x800)) : rng.pick(['\u2028', '\ud83d\ude00', '\ud800', '"', '\\', '\n']);
  }
  return s;
}

function randomId(rng: Rng): unknown {
  switch (rng.int(10)) {
    case 0: return Number.MAX_SAFE_INTEGER + rng.int(1000);
    case 1: return -rng.int(1e9);
    case 2: return rng.next() * 1e308;
    case 3: return randomString(rng, 64);
    case 4: return 'x'.repeat(rng.int(4000));
    case 5: return null;
    case 6: return rng.pick([true, {}, [], 1.5]);
    default: return rng.int(50);
  }
}

/** A JSON value, nested at most `depth` levels (deep nesting is issue 10 item 8's own test). */
function randomValue(rng: Rng, depth: number): unknown {
  const r = rng.int(depth > 0 ? 9 : 6);
  switch (r) {
    case 0: return null;
    case 1: return rng.chance(0.5);
    case 2: return rng.next() * 2 ** rng.int(80) * (rng.chance(0.5) ? 1 : -1);
    case 3: return randomString(rng);
    case 4: return rng.int(100);
    case 5: return rng.pick(PROTOTYPE_NAMES);
    case 6: return Array.from({ length: rng.int(5) }, () => randomValue(rng, depth - 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let i = rng.int(5); i > 0; i--) o[rng.chance(0.2) ? rng.pick(PROTOTYPE_NAMES) : randomString(rng, 10)] = randomValue(rng, depth - 1);
      return o;
    }
  }
}

function paramsFor(rng: Rng, method: string, opts: FuzzOptions): unknown {
  if (rng.chance(0.15)) return randomValue(rng, 6);
  switch (method) {
    case 'initialize':
      return { protocolVersion: rng.pick(VERSIONS), capabilities: rng.chance(0.5) ? {} : randomValue(rng, 6), clientInfo: { name: randomString(rng), version: '1' } };
    case 'tools/call': {
      const name = rng.chance(0.9) ? rng.pick(READ_TOOLS) : rng.pick([...PROTOTYPE_NAMES, randomString(rng)]);
      const args = rng.chance(0.8) ? { path: rng.pick(PATHS), pattern: rng.pick(['greet', 'a', '']), offset: rng.pick([undefined, 1, -1, 1e12]) } : randomValue(rng, 4);
      return { name, arguments: args, ...(rng.chance(0.2) ? { _meta: { progressToken: randomId(rng) } } : {}) };
    }
    case 'resources/read':
      return { uri: rng.pick(['superpi://workspace', 'superpi://loadout', 'superpi://transcripts/x', 'file:///etc/passwd', randomString(rng)]) };
    case 'prompts/get':
      return { name: rng.pick(['review', randomString(rng), ...PROTOTYPE_NAMES]), arguments: randomValue(rng, 3) };
    case 'completion/complete':
      return { ref: { type: 'ref/resource', uri: 'superpi://workspace' }, argument: { name: 'path', value: rng.pick(PATHS) } };
    case 'logging/setLevel':
      return { level: rng.pick(['debug', 'info', 'emergency', 'toString', randomString(rng)]) };
    case 'notifications/cancelled':
      // Over HTTP a cancelled request is never answered and its POST waits for the client to hang up: the
      // run cancels only ids nothing uses there, so every POST that waits for an answer must get one.
      return { requestId: opts.cancelUnusedIdsOnly ? `never-used-${rng.int(1000)}` : randomId(rng) };
    default:
      return rng.chance(0.5) ? {} : randomValue(rng, 4);
  }
}

/** One generated message as the JSON value to send (before serialisation). */
function randomMessage(rng: Rng, opts: FuzzOptions): unknown {
  const r = rng.int(100);
  if (r < 45) { // a request (maybe with a wrong field)
    const method = rng.chance(0.9) ? rng.pick(METHODS) : rng.chance(0.5) ? rng.pick(PROTOTYPE_NAMES) : randomString(rng);
    const m: Record<string, unknown> = { jsonrpc: '2.0', id: rng.chance(0.85) ? rng.int(200) : randomId(rng), method, params: paramsFor(rng, method, opts) };
    if (rng.chance(0.05)) m.jsonrpc = rng.pick(['1.0', 2, null]);
    if (rng.chance(0.05)) m.params = rng.pick([[], 'x', 5]);
    return m;
  }
  if (r < 60) { // a notification
    const method = rng.chance(0.8) ? rng.pick(METHODS) : rng.pick(PROTOTYPE_NAMES);
    return { jsonrpc: '2.0', method, params: paramsFor(rng, method, opts) };
  }
  if (r < 68) return { jsonrpc: '2.0', id: randomId(rng), ...(rng.chance(0.5) ? { result: randomValue(rng, 3) } : { error: { code: rng.int(100000) - 50000, message: randomString(rng) } }) };
  if (r < 78) return randomValue(rng, 5); // wrong types, bare values
  if (r < 86) return Array.from({ length: rng.int(12) }, () => randomMessage(rng, opts)); // a batch, maybe empty
  if (r < 90) return { jsonrpc: '2.0', id: rng.int(200), method: rng.pick(METHODS), params: deep(rng.int(60)) };
  return { jsonrpc: '2.0', id: rng.int(200), method: randomValue(rng, 2), params: randomValue(rng, 2) };
}

function deep(levels: number): unknown {
  let v: unknown = {};
  for (let i = 0; i < levels; i++) v = { a: [v] };
  return v;
}

export type FuzzCase = { kind: 'text'; text: string } | { kind: 'bytes'; bytes: Buffer };

export interface FuzzOptions {
  /** Also send bytes that are not UTF-8 (stdio lines, WebSocket text frames). */
  readonly bytes: boolean;
  /** `notifications/cancelled` names only ids no request uses (see paramsFor). */
  readonly cancelUnusedIdsOnly: boolean;
}

/** The next case of a run: a serialised message, broken JSON, or (with `bytes`) invalid UTF-8. */
export function fuzzCase(rng: Rng, opts: FuzzOptions): FuzzCase {
  const r = rng.int(100);
  if (opts.bytes && r < 4) return { kind: 'bytes', bytes: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d, 0xed, 0xa0, 0x80]) };
  if (r < 12) {
    const text = JSON.stringify(randomMessage(rng, opts));
    // Broken JSON: cut short, or random text.
    return { kind: 'text', text: rng.chance(0.5) ? text.slice(0, rng.int(text.length)) : randomString(rng, 80) };
  }
  return { kind: 'text', text: JSON.stringify(randomMessage(rng, opts)) };
}

/** The server process's resident set size, from /proc (Linux). */
export async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const m = /^VmRSS:\s+(\d+) kB/m.exec(status);
  if (!m) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(m[1]) * 1024;
}

export const binEntry = path.join(repoRoot, 'bin/super-pi.js');

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly url: string;
  stderr(): string;
  stop(): Promise<number | null>;
}

/** `node bin/super-pi.js` serving HTTP and WebSocket on 127.0.0.1, a free port; resolves with its URL. */
export async function startFuzzServer(ws: string, extraArgs: string[] = []): Promise<ServerProcess> {
  const child = spawn(process.execPath, [binEntry, '--host', '127.0.0.1', '--port', '0', '--workspace', ws, '--log-level', 'error', ...extraArgs], {
    cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start; stderr: ${stderr}`)), 20_000);
    child.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = /Streamable HTTP\s+(http:\/\/\S+)/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}; stderr: ${stderr}`)));
  });
  return { child, url, stderr: () => stderr, stop: () => stopChild(child) };
}

export function stopChild(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', (code) => {
      clearTimeout(force);
      resolve(code);
    });
    child.kill('SIGTERM');
  });
}
