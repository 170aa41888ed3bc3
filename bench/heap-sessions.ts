// Where an idle Streamable HTTP session's memory goes (issue 27): super-pi as a user runs it (the dist/
// bundle, `bin/super-pi.js`, default threads) under `--inspect`, N idle sessions opened (initialize +
// notifications/initialized, as bench/http.ts section 3), and a heap snapshot of every isolate — the main
// thread and each worker thread (scheduler threads, where the connection actors live; the tool pool) —
// taken through the inspector before and after, each after a full GC. The output: bytes per session per
// isolate, by kind of object and by owner (bench/lib/heap-snapshot.ts), and VmRSS per session beside the
// heaps' sum, so what lies outside the V8 heaps shows as the difference.
// Usage: npm run build && npx tsx bench/heap-sessions.ts [--sessions 3000] [--warmup 1000] [--top 40] [--keep DIR]

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';
import { makeSandbox, repoRoot } from '../test/e2e/fixtures.ts';
import { bounded, McpHttpSession, rssBytes } from './lib/mcp-http-client.ts';
import { type Delta, diff, type HeapSummary, summarize } from './lib/heap-snapshot.ts';
import { stopChild } from './lib/processes.ts';
import { fmt, sleep } from './lib/stats.ts';

const { values: opts } = parseArgs({
  options: {
    sessions: { type: 'string', default: '3000' },
    warmup: { type: 'string', default: '1000' },
    top: { type: 'string', default: '40' },
    keep: { type: 'string' },
    args: { type: 'string', default: '' },
  },
});
const SESSIONS = Number(opts.sessions);
const WARMUP = Number(opts.warmup);
const TOP = Number(opts.top);
const CONCURRENCY = 64;
const SNAPSHOT_WAIT_MS = 20_000;

interface Reply {
  readonly id?: number;
  readonly method?: string;
  readonly params?: Record<string, unknown>;
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly message: string };
}

/** One inspector connection to the server's main thread, and through it (NodeWorker) to each worker. */
class Inspector {
  readonly #ws: WebSocket;
  #nextId = 1;
  readonly #waiting = new Map<number, (r: Reply) => void>();
  readonly #workers = new Map<string, string>();
  /** Snapshot chunks of the snapshot being taken, per target ('' = main thread). */
  readonly #chunks = new Map<string, string[]>();

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on('message', (data: Buffer) => this.#onMessage('', JSON.parse(data.toString()) as Reply));
  }

  static async connect(url: string): Promise<Inspector> {
    const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 2 ** 30 });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    return new Inspector(ws);
  }

  get workers(): ReadonlyMap<string, string> {
    return this.#workers;
  }

  #onMessage(target: string, msg: Reply): void {
    if (msg.method === 'NodeWorker.attachedToWorker') {
      const p = msg.params as { sessionId: string; workerInfo: { url: string; title: string } };
      this.#workers.set(p.sessionId, `${p.workerInfo.title} ${path.basename(p.workerInfo.url)}`);
      return;
    }
    if (msg.method === 'NodeWorker.detachedFromWorker') {
      this.#workers.delete((msg.params as { sessionId: string }).sessionId);
      return;
    }
    if (msg.method === 'NodeWorker.receivedMessageFromWorker') {
      const p = msg.params as { sessionId: string; message: string };
      this.#onMessage(p.sessionId, JSON.parse(p.message) as Reply);
      return;
    }
    if (msg.method === 'HeapProfiler.addHeapSnapshotChunk') {
      this.#chunks.get(target)?.push((msg.params as { chunk: string }).chunk);
      return;
    }
    if (msg.id !== undefined) {
      this.#waiting.get(msg.id)?.(msg);
      this.#waiting.delete(msg.id);
    }
  }

  /** A command to the main thread (`target` '') or to a worker (its inspector session id). */
  send(target: string, method: string, params: Record<string, unknown> = {}): Promise<Reply> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, (r) => (r.error ? reject(new Error(`${method}: ${r.error.message}`)) : resolve(r)));
      const message = JSON.stringify({ id, method, params });
      if (target === '') {
        this.#ws.send(message);
      } else {
        const outer = this.#nextId++;
        this.#waiting.set(outer, (r) => { if (r.error) reject(new Error(`sendMessageToWorker: ${r.error.message}`)); });
        this.#ws.send(JSON.stringify({ id: outer, method: 'NodeWorker.sendMessageToWorker', params: { sessionId: target, message } }));
      }
    });
  }

  /** A heap snapshot of one isolate, after two full GCs. */
  async snapshot(target: string): Promise<string> {
    await this.send(target, 'HeapProfiler.enable');
    await this.send(target, 'HeapProfiler.collectGarbage');
    await this.send(target, 'HeapProfiler.collectGarbage');
    const chunks: string[] = [];
    this.#chunks.set(target, chunks);
    await this.send(target, 'HeapProfiler.takeHeapSnapshot', { reportProgress: false, captureNumericValue: false });
    this.#chunks.delete(target);
    return chunks.join('');
  }

  /** `process.memoryUsage()` of one isolate's thread (heapUsed, external, arrayBuffers are per isolate). */
  async memoryUsage(target: string): Promise<NodeJS.MemoryUsage> {
    const r = await this.send(target, 'Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true });
    return JSON.parse((r.result as { result: { value: string } }).result.value) as NodeJS.MemoryUsage;
  }

  close(): void {
    this.#ws.close();
  }
}

interface IsolateReading {
  readonly name: string;
  readonly summary: HeapSummary;
  readonly usage: NodeJS.MemoryUsage;
}

async function readAll(inspector: Inspector, keep: string | undefined, label: string): Promise<IsolateReading[]> {
  const targets: [string, string][] = [['', 'main thread'], ...[...inspector.workers].sort((a, b) => a[1].localeCompare(b[1]))];
  const out: IsolateReading[] = [];
  for (const [target, name] of targets) {
    process.stderr.write(`  ${label}: snapshot of ${name}\n`);
    // A thread parked in Atomics.wait (an idle tool-pool thread) never reads the inspector's messages: skipped.
    const json = target === '' ? await inspector.snapshot(target) : await Promise.race([inspector.snapshot(target), sleep(SNAPSHOT_WAIT_MS).then(() => null)]);
    if (json === null) {
      process.stderr.write(`  ${label}: ${name} did not answer within ${SNAPSHOT_WAIT_MS} ms: skipped\n`);
      continue;
    }
    if (keep) await writeFile(path.join(keep, `${label}-${name.replace(/[^\w.-]+/g, '_')}.heapsnapshot`), json);
    out.push({ name, summary: summarize(json), usage: await inspector.memoryUsage(target) });
  }
  return out;
}

function deltaTable(rows: readonly Delta[]): string {
  const lines = ['| bytes/session | objects/session | what |', '|---:|---:|---|'];
  for (const d of rows.slice(0, TOP)) lines.push(`| ${fmt(d.bytes, 0)} | ${fmt(d.count, 2)} | \`${d.label.replace(/\|/g, '\\|').replace(/`/g, "'")}\` |`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const sandbox = await makeSandbox();
  const max = String(WARMUP + SESSIONS + 1000);
  const extra = opts.args === '' ? [] : opts.args.split(' ');
  const child: ChildProcess = spawn(process.execPath, ['--inspect=127.0.0.1:0', path.join(repoRoot, 'bin/super-pi.js'), '--port', '0', '--workspace', sandbox.ws, '--max-sessions', max, '--max-anonymous-sessions', max, ...extra], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    let stdout = '';
    let stderr = '';
    const found = await new Promise<{ url: string; inspect: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`super-pi did not start; stderr: ${stderr}`)), 30_000);
      const check = () => {
        const url = /Streamable HTTP\s+(http:\/\/\S+)/.exec(stdout)?.[1];
        const inspect = /Debugger listening on (ws:\/\/\S+)/.exec(stderr)?.[1];
        if (url && inspect) {
          clearTimeout(timer);
          resolve({ url, inspect });
        }
      };
      child.stdout?.on('data', (d: Buffer) => { stdout += d.toString(); check(); });
      child.stderr?.on('data', (d: Buffer) => { stderr += d.toString(); check(); });
      child.once('exit', (code) => reject(new Error(`super-pi exited with ${code}; stderr: ${stderr}`)));
    });
    const inspector = await Inspector.connect(found.inspect);
    await inspector.send('', 'NodeWorker.enable', { waitForDebuggerOnStart: false });
    const keep = opts.keep;
    if (keep) await mkdir(keep, { recursive: true });
    // Warm-up sessions, kept: the heaps grow to their working size, every lazy path has run once.
    await bounded(WARMUP, CONCURRENCY, () => McpHttpSession.open(found.url));
    await sleep(1500);
    const pid = child.pid as number;
    const rssBefore = rssBytes(pid);
    const before = await readAll(inspector, keep, 'before');
    const sessions = await bounded(SESSIONS, CONCURRENCY, () => McpHttpSession.open(found.url));
    await sleep(1500);
    const rssAfter = rssBytes(pid);
    const after = await readAll(inspector, keep, 'after');
    const out: string[] = [];
    const emit = (s: string) => { out.push(s); process.stdout.write(`${s}\n`); };
    emit(`# Memory per idle Streamable HTTP session, by isolate (${fmt(SESSIONS, 0)} sessions after ${fmt(WARMUP, 0)} warm-up, ${new Date().toISOString()})`);
    emit('');
    emit(`VmRSS before each set of snapshots, after − before: ${fmt((rssAfter - rssBefore) / SESSIONS, 0)} B per session (the "before" snapshots themselves grow the process: indicative only; bench/http.ts is the measure of record).`);
    emit('');
    emit('| isolate | heap (snapshot self sizes) B/session | heapUsed B/session | external B/session | arrayBuffers B/session |');
    emit('|---|---:|---:|---:|---:|');
    let heapSum = 0;
    for (const a of after) {
      const b = before.find((x) => x.name === a.name);
      if (!b) continue;
      const per = (x: number, y: number) => fmt((x - y) / SESSIONS, 0);
      heapSum += (a.summary.total - b.summary.total) / SESSIONS;
      emit(`| ${a.name} | ${per(a.summary.total, b.summary.total)} | ${per(a.usage.heapUsed, b.usage.heapUsed)} | ${per(a.usage.external, b.usage.external)} | ${per(a.usage.arrayBuffers, b.usage.arrayBuffers)} |`);
    }
    emit(`| all isolates | ${fmt(heapSum, 0)} | | | |`);
    for (const a of after) {
      const b = before.find((x) => x.name === a.name);
      if (!b) continue;
      const kinds = diff(b.summary.byKind, a.summary.byKind, SESSIONS);
      if (kinds.reduce((s, d) => s + d.bytes, 0) < 64) continue;
      emit('');
      emit(`## ${a.name}: by kind`);
      emit('');
      emit(deltaTable(kinds));
      emit('');
      emit(`## ${a.name}: by owner`);
      emit('');
      emit(deltaTable(diff(b.summary.byOwner, a.summary.byOwner, SESSIONS)));
    }
    if (keep) await writeFile(path.join(keep, 'report.md'), `${out.join('\n')}\n`);
    inspector.close();
    await Promise.all(sessions.slice(0, 1).map((s) => s.close()));
  } finally {
    await stopChild(child, 10_000, 'SIGTERM');
    await sandbox.cleanup();
  }
}

await main();
