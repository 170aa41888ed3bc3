// Shared by the per-transport fuzz runs: a seeded generator of hostile and ordinary JSON-RPC traffic of
// both protocol eras (the 2026-07-28 half is fuzz-modern.ts),
// the real server process (`node bin/super-pi.js`, the dist bundle) on 127.0.0.1, and its RSS.
// Seeded, so a failure can be replayed: the seed is printed by each run and can be set with FUZZ_SEED.

import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot } from './fixtures.ts';
import { type ModernExpectation, ModernFuzz } from './fuzz-modern.ts';
import { deep, PATHS, PROTOTYPE_NAMES, randomId, randomString, randomValue, READ_TOOLS, type Rng } from './fuzz-random.ts';

export { Rng } from './fuzz-random.ts';

/** Messages per fuzz run, per transport (issue 10). */
export const FUZZ_MESSAGES = 10_000;
/**
 * A server that has absorbed a fuzz run must stay below this resident size. Generous on purpose (an idle
 * server is ~100-150 MB with its worker threads): it catches leaks per message, not noise.
 */
export const FUZZ_RSS_LIMIT_BYTES = 600 * 1024 * 1024;

export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);

const METHODS = [
  'initialize', 'ping', 'tools/list', 'tools/call', 'resources/list', 'resources/read', 'resources/templates/list',
  'resources/subscribe', 'resources/unsubscribe', 'prompts/list', 'prompts/get', 'completion/complete', 'logging/setLevel',
  'notifications/initialized', 'notifications/cancelled', 'notifications/progress', 'notifications/roots/list_changed',
];
const VERSIONS = ['2025-06-18', '2025-03-26', '2024-11-05', '1999-01-01', ''];

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

/** One generated 2025-era message as the JSON value to send (before serialisation); batches may hold 2026-07-28 requests. */
function randomMessage(rng: Rng, opts: FuzzOptions, modern: ModernFuzz): unknown {
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
  if (r < 86) { // a batch, maybe empty, of both eras
    return Array.from({ length: rng.int(12) }, () => (rng.chance(0.25) ? modern.request(true).value : randomMessage(rng, opts, modern)));
  }
  if (r < 90) return { jsonrpc: '2.0', id: rng.int(200), method: rng.pick(METHODS), params: deep(rng.int(60)) };
  return { jsonrpc: '2.0', id: rng.int(200), method: randomValue(rng, 2), params: randomValue(rng, 2) };
}

export type FuzzCase =
  | {
    readonly kind: 'text';
    readonly text: string;
    /** A 2026-07-28 request sent whole: the answer the server owes it. */
    readonly expect?: ModernExpectation;
    /** Over HTTP, the 2026-07-28 headers its POST carries (right or wrong). */
    readonly headers?: Readonly<Record<string, string>>;
    /** The listen this `notifications/cancelled` ends: a cancelled request is owed no answer. */
    readonly cancels?: string;
  }
  | { readonly kind: 'bytes'; readonly bytes: Buffer };

export interface FuzzOptions {
  /** Also send bytes that are not UTF-8 (stdio lines, WebSocket text frames). */
  readonly bytes: boolean;
  /** `notifications/cancelled` names only ids no request uses (see paramsFor). */
  readonly cancelUnusedIdsOnly: boolean;
  /**
   * Open `subscriptions/listen` streams are cancelled later in the run by the generator (stdio,
   * WebSocket: one connection carries them); else the test reads each listen's first message and closes
   * it (HTTP: a listen's POST is its stream), and no listen is put in a batch.
   */
  readonly cancelListens: boolean;
}

/** Share of cases that are a 2026-07-28 request sent whole (more ride in batches and in broken JSON). */
const MODERN_SHARE = 35;

/**
 * The cases of one run, in order: 2025-era messages (valid, broken, batches, bytes that are not UTF-8)
 * and 2026-07-28 requests interleaved, each modern request with its own id (`modern-N`) so its answer
 * can be checked.
 */
export class FuzzGenerator {
  readonly #modern: ModernFuzz;
  constructor(readonly rng: Rng, readonly opts: FuzzOptions) {
    this.#modern = new ModernFuzz(rng, { cancelListens: opts.cancelListens, listens: true });
  }

  /** The next case: a serialised message, broken JSON, or (with `bytes`) invalid UTF-8. */
  next(): FuzzCase {
    const { rng, opts } = this;
    const r = rng.int(100);
    if (opts.bytes && r < 4) return { kind: 'bytes', bytes: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d, 0xed, 0xa0, 0x80]) };
    if (r < 12) {
      const m = rng.chance(0.3) ? this.#modern.request(true) : null;
      const text = JSON.stringify(m === null ? randomMessage(rng, opts, this.#modern) : m.value);
      // Broken JSON: cut short, or random text.
      const broken = rng.chance(0.5) ? text.slice(0, rng.int(text.length)) : randomString(rng, 80);
      return m === null ? { kind: 'text', text: broken } : { kind: 'text', text: broken, headers: m.headers };
    }
    if (r < 12 + MODERN_SHARE) {
      const cancel = this.#modern.cancellation();
      if (cancel !== undefined) return { kind: 'text', text: JSON.stringify(cancel.value), cancels: cancel.id };
      const m = this.#modern.request(false);
      const text = JSON.stringify(m.value);
      return m.expect === undefined ? { kind: 'text', text, headers: m.headers } : { kind: 'text', text, headers: m.headers, expect: m.expect };
    }
    return { kind: 'text', text: JSON.stringify(randomMessage(rng, opts, this.#modern)) };
  }

  /** The last cases of a connection: a cancellation of each listen it left open (none without `cancelListens`). */
  finish(): FuzzCase[] {
    return this.#modern.cancelAll().map((c) => ({ kind: 'text', text: JSON.stringify(c.value), cancels: c.id }));
  }
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

/** `node bin/super-pi.js` serving HTTP and WebSocket on 127.0.0.1, a free port (`env` added to this process's); resolves with its URL. */
export async function startFuzzServer(ws: string, extraArgs: string[] = [], env: Record<string, string> = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [binEntry, '--host', '127.0.0.1', '--port', '0', '--workspace', ws, '--log-level', 'error', ...extraArgs], {
    cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env },
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
