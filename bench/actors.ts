// What the actor runtime costs, measured side by side with the peer it replaces, as ratios (absolute
// times drift on a shared machine; ratios measured in the same run do not):
//   1. the thread crossing per call: a plain in-thread Connection vs an actor-backed Application session
//   2. spawning connection actors, and the memory of an idle one (target: under 20 KB, worker + main)
//   3. recovery: a scheduler thread killed under a session, until the session answers again (target: under 200 ms)
//   4. the codec: a 1 KB object round trip by structured clone, JSON and msgpackr; a real checkpoint's size
// Usage: npm run bench:actors   (builds dist/ first: scheduler threads boot from the bundle)
// Writes bench/results/actors.md.

import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ActorRef } from '../src/actors/actor-ref.ts';
import { decodeCheckpoint, encodeCheckpoint } from '../src/actors/codec.ts';
import { type ConnectionActorArgs, connectionBehaviourRef, type ConnectionMessage, type ConnectionOutput } from '../src/connection/connection-actor.ts';
import { Scheduler } from '../src/actors/scheduler.ts';
import { handleMcpLine } from '../src/mcp/handle.ts';
import { type ConnectionConfig, initialState } from '../src/mcp/state.ts';
import { Application } from '../src/server/application.ts';
import { Connection } from '../src/connection/connection.ts';
import { createLogger } from '../src/log/logger.ts';
import { HeapProbe } from './lib/heap-probe.ts';
import { type Call, RpcClient, type RpcReply, sequential, windowed } from './lib/rpc-client.ts';
import { fmt, kb, nowUs, percentile, ratio, signed, sleep, table } from './lib/stats.ts';
import { schedulerEntry } from '../src/server/thread-entries.ts';

const SEQUENTIAL_CALLS = 2_000;
const THROUGHPUT_CALLS = 20_000;
const IN_FLIGHT = 64;
/** Both sides are measured in alternating blocks (sequential: this many; windowed: half). */
const BLOCKS = 10;
const SPAWNED_ACTORS = 10_000;
const SPAWN_CONCURRENCY = 16;
const RECOVERY_ROUNDS = 20;
const CODEC_ROUND_TRIPS = 20_000;
const MEMORY_TARGET_BYTES = 20 * 1024;
const RECOVERY_TARGET_MS = 200;
/** The schedulers supervisor allows 10 restarts per 2 s: kills are spaced so the bench never trips it. */
const MIN_MS_BETWEEN_KILLS = 250;

const logger = createLogger('error');
const TOOL_TIMEOUT_MS = 30_000;
const INITIALIZE = { protocolVersion: '2025-06-18', capabilities: { roots: { listChanged: true }, elicitation: {} }, clientInfo: { name: 'bench', version: '1.0.0' } };
const PING_LINE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });

const here = path.dirname(fileURLToPath(import.meta.url));
const out: string[] = [];
const emit = (text: string) => {
  out.push(text);
  process.stdout.write(`${text}\n`);
};

function expectResult(reply: RpcReply): Record<string, unknown> {
  if (reply.error || typeof reply.result !== 'object' || reply.result === null) throw new Error(`expected a result, got ${JSON.stringify(reply)}`);
  return reply.result as Record<string, unknown>;
}

const ping: Call = async (client) => void expectResult(await client.request('ping'));
const readSmall: Call = async (client) => {
  const result = expectResult(await client.request('tools/call', { name: 'read', arguments: { path: 'small.txt' } }));
  if (result.isError) throw new Error(`read failed: ${JSON.stringify(result)}`);
};

function startApplication(workspace: string, onGiveUp: (message: string) => void): Promise<Application> {
  return Application.start({
    workspace, harness: 'super-pi-code', pageSize: 50, toolTimeoutMs: TOOL_TIMEOUT_MS, threads: 2, toolThreads: 1,
    chaos: {}, logger, serverVersion: 'bench', onGiveUp,
  });
}

/** A session's configuration as Application.open makes it (defaults filled in by initialState). */
const sessionConfig = (workspace: string): ConnectionConfig =>
  initialState({ server: { name: 'super-pi', version: 'bench' }, harness: 'super-pi-code', workspace, principal: { kind: 'local' }, pageSize: 50 }).config;

const giveUp = (message: string) => {
  throw new Error(`the application gave up during the benchmark: ${message}`);
};

// ---------------------------------------------------------------------------------------------------
// 1. Per-call overhead of the thread crossing

async function crossingOverhead(workspace: string): Promise<void> {
  const app = await startApplication(workspace, giveUp);
  // Both sides run tools through the same executor (the app's tool pool routing; a small read runs in
  // the main thread either way), so the only difference is where the protocol core runs.
  const inThread = new RpcClient();
  const connection = new Connection(initialState(sessionConfig(workspace)), { workspace, logger, toolTimeoutMs: TOOL_TIMEOUT_MS, executeTool: app.tools.execute }, inThread.receive);
  inThread.attach((text) => connection.receiveFrame({ kind: 'line', text }));
  const actor = new RpcClient();
  const sessionEntry = await app.open({ principal: { kind: 'local' }, transport: 'stdio', send: (out) => actor.receive(out.line) });
  const session = sessionEntry.session;
  actor.attach((text) => session.receiveFrame({ kind: 'line', text }));
  for (const client of [inThread, actor]) expectResult(await client.request('initialize', INITIALIZE));

  const rows: string[][] = [];
  for (const [name, call] of [['ping', ping], ['tools/call read (small file)', readSmall]] as const) {
    for (const client of [inThread, actor]) {
      await sequential(client, call, 500);
      await windowed(client, call, 2_000, IN_FLIGHT);
    }
    // Alternating blocks: drift on a shared machine hits both sides alike.
    const seqA: number[] = [];
    const seqB: number[] = [];
    let wallA = 0;
    let wallB = 0;
    for (let block = 0; block < BLOCKS; block++) {
      seqA.push(...await sequential(inThread, call, SEQUENTIAL_CALLS / BLOCKS));
      seqB.push(...await sequential(actor, call, SEQUENTIAL_CALLS / BLOCKS));
    }
    for (let block = 0; block < BLOCKS / 2; block++) {
      wallA += await windowed(inThread, call, THROUGHPUT_CALLS / (BLOCKS / 2), IN_FLIGHT);
      wallB += await windowed(actor, call, THROUGHPUT_CALLS / (BLOCKS / 2), IN_FLIGHT);
    }
    for (const p of [50, 99]) {
      const a = percentile(seqA, p);
      const b = percentile(seqB, p);
      rows.push([name, `one at a time, p${p} (µs)`, fmt(a), fmt(b), ratio(b, a), `${signed(b - a)} µs`]);
    }
    const [tpA, tpB] = [THROUGHPUT_CALLS / (wallA / 1e6), THROUGHPUT_CALLS / (wallB / 1e6)];
    rows.push([name, `${IN_FLIGHT} in flight (calls/s)`, fmt(tpA, 0), fmt(tpB, 0), ratio(tpB, tpA), `${signed((wallB - wallA) / THROUGHPUT_CALLS)} µs`]);
  }
  await connection.close();
  await app.close(sessionEntry.id);
  await app.stop();

  emit(`## 1. Per-call overhead of the thread crossing\n`);
  emit(`Same traffic through a plain in-thread \`Connection\` and an actor-backed \`Application\` session (threads: 2, toolThreads: 1); ` +
    `${SEQUENTIAL_CALLS} calls one at a time, ${THROUGHPUT_CALLS} calls with ${IN_FLIGHT} in flight, after a warm-up, in blocks alternating between the two sides. Both run tools through the app's tool pool executor (a small \`read\` runs in the main thread either way). ` +
    `"added per call": p50 difference for latency, wall time per call difference for throughput.\n`);
  emit(table(['workload', 'measure', 'in-thread', 'actor', 'actor ÷ in-thread', 'added per call'], rows));
  emit('');
}

// ---------------------------------------------------------------------------------------------------
// 2. Spawn time and memory per idle actor

interface MemoryFigures {
  readonly perActorWorker: number;
  readonly perActorMain: number;
}

async function spawnAndMemory(workspace: string, probe: HeapProbe): Promise<MemoryFigures> {
  const scheduler = new Scheduler({ threads: 2, log: () => {}, entry: schedulerEntry() });
  const threads = [0, 1].map((slot) => scheduler.startThread(slot));
  await Promise.all(threads.map((t) => t.ready));
  const args: ConnectionActorArgs = { config: sessionConfig(workspace) };
  const ping: ConnectionMessage = { k: 'line', line: PING_LINE };
  const idle = () => {};
  const isSchedulerWorker = (url: string) => url.includes('scheduler-worker');

  /** Spawns one actor and waits for its answer to a ping: then it is up and idle. */
  const spawnReady = async (): Promise<ActorRef> => {
    const ref = await scheduler.spawn(connectionBehaviourRef, args, 'bench');
    await new Promise<void>((resolve, reject) => {
      ref.onMessage((msg) => {
        const { replies } = msg as ConnectionOutput;
        if (replies.length === 1 && replies[0]?.line.includes('"result":{}')) resolve();
        else reject(new Error(`unexpected first output ${JSON.stringify(msg)}`));
      });
      ref.cast(ping);
    });
    ref.onMessage(idle);
    return ref;
  };
  const spawnMany = async (count: number, latencies: Float64Array, refs: ActorRef[]): Promise<number> => {
    let next = 0;
    const started = nowUs();
    await Promise.all(Array.from({ length: SPAWN_CONCURRENCY }, async () => {
      while (next < count) {
        const i = next++;
        const t0 = nowUs();
        refs[i] = await spawnReady();
        latencies[i] = nowUs() - t0;
      }
    }));
    return nowUs() - started;
  };

  // Warm up (JIT on both sides), then let the warm-up actors go.
  const warm: ActorRef[] = new Array<ActorRef>(500);
  await spawnMany(500, new Float64Array(500), warm);
  for (const ref of warm) ref.stop();
  await Promise.all(warm.map((ref) => ref.exited));

  const latencies = new Float64Array(SPAWNED_ACTORS);
  const refs: ActorRef[] = new Array<ActorRef>(SPAWNED_ACTORS);
  await sleep(600); // a fresh heartbeat pong (every 250 ms)
  const heartbeatBefore = threads.reduce((sum, t) => sum + t.heapUsed, 0);
  const workersBefore = await probe.workerHeapsUsed(isSchedulerWorker);
  const mainBefore = await probe.mainHeapUsed();

  const totalUs = await spawnMany(SPAWNED_ACTORS, latencies, refs);
  const placed = threads.map((t) => t.actors.size);

  await sleep(1_000);
  const heartbeatAfter = threads.reduce((sum, t) => sum + t.heapUsed, 0);
  const workersAfter = await probe.workerHeapsUsed(isSchedulerWorker);
  const mainAfter = await probe.mainHeapUsed();
  if (workersBefore.length !== 2 || workersAfter.length !== 2) throw new Error(`expected 2 scheduler workers under the inspector, saw ${workersBefore.length} and ${workersAfter.length}`);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const perActorWorker = (sum(workersAfter) - sum(workersBefore)) / SPAWNED_ACTORS;
  const perActorMain = (mainAfter - mainBefore) / SPAWNED_ACTORS;
  const perActorHeartbeat = (heartbeatAfter - heartbeatBefore) / SPAWNED_ACTORS;
  const alive = refs.filter((r) => r.alive).length;

  for (const t of threads) t.stop();
  await Promise.all(threads.map((t) => t.exited));

  const total = perActorWorker + perActorMain;
  emit(`## 2. Actor spawn time and memory per idle actor\n`);
  emit(`${fmt(SPAWNED_ACTORS, 0)} connection actors spawned with \`scheduler.spawn\` on 2 threads (${placed.join(' + ')}), ${SPAWN_CONCURRENCY} at a time; ` +
    `each is ready when its answer to a ping comes back. Heap figures after a full GC (through the inspector), before and after, ÷ N; ` +
    `the heartbeat figure is \`SchedulerThread.heapUsed\` without a GC. ${alive} of ${SPAWNED_ACTORS} alive at the end.\n`);
  emit(table(['measure', 'value'], [
    ['spawn → first reply, total ÷ N', `${fmt(totalUs / SPAWNED_ACTORS)} µs`],
    ['spawn → first reply, p50 / p99 (each)', `${fmt(percentile(latencies, 50))} / ${fmt(percentile(latencies, 99))} µs`],
    ['spawns per second', fmt(SPAWNED_ACTORS / (totalUs / 1e6), 0)],
    ['worker heap per idle actor (after GC)', kb(perActorWorker)],
    ['main heap per actor (ActorRef etc., after GC)', kb(perActorMain)],
    ['**total per idle actor**', `**${kb(total)}** (target < ${kb(MEMORY_TARGET_BYTES)}: ${total < MEMORY_TARGET_BYTES ? 'met' : 'MISSED'})`],
    ['worker heap per actor, heartbeat (no GC)', kb(perActorHeartbeat)],
  ]));
  emit('');
  return { perActorWorker, perActorMain };
}

// ---------------------------------------------------------------------------------------------------
// 3. Recovery time after a scheduler thread is killed

interface RecoveryFigures {
  readonly p95: number;
  readonly max: number;
}

async function recovery(workspace: string): Promise<RecoveryFigures> {
  let gaveUp: string | null = null;
  const app = await startApplication(workspace, (message) => { gaveUp = message; });
  const client = new RpcClient();
  const sessionEntry = await app.open({ principal: { kind: 'local' }, transport: 'stdio', send: (out) => client.receive(out.line) });
  const session = sessionEntry.session;
  client.attach((text) => session.receiveFrame({ kind: 'line', text }));
  expectResult(await client.request('initialize', INITIALIZE));

  const bothReady = async () => {
    for (let i = 0; i < 500; i++) {
      const threads = app.scheduler.threads();
      if (threads.length === 2 && threads.every((t) => t.isReady) && session.actorId !== null) return;
      await sleep(10);
    }
    throw new Error('the scheduler threads did not come back within 5 s');
  };
  const recoveries: number[] = [];
  const replacementStarted: number[] = [];
  const replacementBooted: number[] = [];
  let aborted = 0;
  let lastKill = 0;
  for (let round = 0; round < RECOVERY_ROUNDS; round++) {
    await bothReady();
    await sleep(Math.max(0, MIN_MS_BETWEEN_KILLS - (performance.now() - lastKill)));
    await ping(client); // the session is up and warm
    const host = app.scheduler.threads().find((t) => t.actors.has(session.actorId ?? ''));
    if (!host) throw new Error('no thread hosts the session');
    const survivors = new Set(app.scheduler.threads());
    lastKill = performance.now();
    const started = nowUs();
    host.kill();
    // Measured alongside: until the supervisor starts a replacement thread, and until it is ready.
    const replacement = (async () => {
      for (;;) {
        const fresh = app.scheduler.threads().find((t) => !survivors.has(t));
        if (fresh) {
          const startedAt = nowUs() - started;
          await fresh.ready;
          return { startedAt, readyAt: nowUs() - started };
        }
        await sleep(1);
      }
    })();
    for (;;) {
      const reply = await client.request('ping', undefined, 5_000);
      if (reply.result !== undefined) break;
      if (reply.error?.code !== -32010) throw new Error(`unexpected reply while recovering: ${JSON.stringify(reply)}`);
      aborted++;
    }
    recoveries.push((nowUs() - started) / 1000);
    const { startedAt, readyAt } = await replacement;
    replacementStarted.push(startedAt / 1000);
    replacementBooted.push((readyAt - startedAt) / 1000);
  }
  const restarts = app.health().restarts;
  await app.close(sessionEntry.id);
  await app.stop();
  if (gaveUp) throw new Error(`the application gave up: ${gaveUp}`);

  const p50 = percentile(recoveries, 50);
  const p95 = percentile(recoveries, 95);
  const max = Math.max(...recoveries);
  emit(`## 3. Recovery after a scheduler thread is killed\n`);
  emit(`${RECOVERY_ROUNDS} rounds: kill the thread hosting an initialized session, then ping (a new id each) until a result comes back; ` +
    `${aborted} pings were answered -32010 (aborted) on the way; ${restarts} restarts counted by the supervisors. ` +
    `Kills are ≥ ${MIN_MS_BETWEEN_KILLS} ms apart (the schedulers supervisor allows 10 restarts per 2 s).\n`);
  emit(table(['measure', 'p50', 'p95', 'max', 'target'], [
    ['kill → successful ping (ms)', fmt(p50), fmt(p95), fmt(max), `< ${RECOVERY_TARGET_MS} ms: ${max < RECOVERY_TARGET_MS ? 'met' : p95 < RECOVERY_TARGET_MS ? 'met at p95, not at max' : 'MISSED'}`],
    ['kill → replacement thread started (ms)', fmt(percentile(replacementStarted, 50)), fmt(percentile(replacementStarted, 95)), fmt(Math.max(...replacementStarted)), ''],
    ['replacement started → ready (boot, ms)', fmt(percentile(replacementBooted, 50)), fmt(percentile(replacementBooted, 95)), fmt(Math.max(...replacementBooted)), ''],
  ]));
  emit('');
  return { p95, max };
}

// ---------------------------------------------------------------------------------------------------
// 4. The codec

/** A JSON-ish object of about 1 KB: a tool result with structured content. */
function sampleObject(): Record<string, unknown> {
  const matches = Array.from({ length: 7 }, (_, i) => ({ path: `src/module-${i}/file.ts`, line: 10 * i + 3, text: `export function handler${i}(x: number) { return x * ${i}; }` }));
  return { jsonrpc: '2.0', id: 4242, result: { content: [{ type: 'text', text: 'Found 7 matches in 7 files.' }], structuredContent: { matches, truncated: false }, isError: false } };
}

async function codec(workspace: string): Promise<void> {
  const worker = new Worker(new URL('./lib/echo-worker.mjs', import.meta.url), { execArgv: [] });
  let receive: (value: unknown) => void = () => {};
  worker.on('message', (value: unknown) => receive(value));
  const roundTrip = (value: unknown, transfer?: ArrayBuffer[]) => new Promise<unknown>((resolve) => {
    receive = resolve;
    worker.postMessage(value, transfer);
  });
  const object = sampleObject();
  const line = JSON.stringify(object);
  const modes: { readonly mode: string; readonly label: string; readonly once: () => Promise<unknown> }[] = [
    { mode: 'string', label: 'protocol line as a string (no parsing; the floor)', once: () => roundTrip(line) },
    { mode: 'clone', label: '(a) structured clone of the object', once: () => roundTrip(object) },
    { mode: 'json', label: '(b) JSON string (stringify + parse at each end)', once: async () => JSON.parse((await roundTrip(JSON.stringify(object))) as string) },
    {
      mode: 'msgpack', label: '(c) msgpackr, exact-size ArrayBuffer transferred', once: async () => {
        const buffer = encodeCheckpoint(object);
        return decodeCheckpoint((await roundTrip(buffer, [buffer])) as ArrayBuffer);
      },
    },
  ];
  const perTrip = new Map<string, number>();
  for (const { mode, once } of modes) {
    await roundTrip({ setMode: mode });
    for (let i = 0; i < 2_000; i++) await once();
    const started = nowUs();
    for (let i = 0; i < CODEC_ROUND_TRIPS; i++) await once();
    perTrip.set(mode, (nowUs() - started) / CODEC_ROUND_TRIPS);
  }
  const clone = perTrip.get('clone') ?? Number.NaN;
  const rows = modes.map(({ mode, label }) => {
    const us = perTrip.get(mode) ?? Number.NaN;
    return [label, fmt(us), ratio(us, clone)];
  });
  await worker.terminate();

  // A real session checkpoint: after initialize, encoded as connection-actor.ts does (state minus pending).
  const step = handleMcpLine(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INITIALIZE }), initialState(sessionConfig(workspace)));
  const { pending: _pending, ...checkpoint } = step.state;
  const packed = encodeCheckpoint(checkpoint);
  const jsonBytes = Buffer.byteLength(JSON.stringify(checkpoint));
  const started = nowUs();
  for (let i = 0; i < 10_000; i++) decodeCheckpoint(encodeCheckpoint(checkpoint));
  const encodeDecodeUs = (nowUs() - started) / 10_000;

  emit(`## 4. The codec\n`);
  emit(`Round trip main → echo worker → main of a ${Buffer.byteLength(line)}-byte JSON-ish object, one at a time, ${fmt(CODEC_ROUND_TRIPS, 0)} each after a warm-up; ` +
    `the worker decodes and re-encodes in the same format.\n`);
  emit(table(['format', 'µs per round trip', '÷ structured clone'], rows));
  emit('');
  emit(table(['session checkpoint (after initialize)', 'value'], [
    ['V8 serialisation (node:v8), as connection-actor.ts encodes it (src/actors/codec.ts)', `${packed.byteLength} bytes`],
    ['JSON.stringify', `${jsonBytes} bytes`],
    ['codec ÷ JSON', ratio(packed.byteLength, jsonBytes)],
    ['encode + decode, in-thread', `${fmt(encodeDecodeUs)} µs`],
  ]));
  emit('');
}

// ---------------------------------------------------------------------------------------------------

function commandLine(): string {
  const event = process.env.npm_lifecycle_event;
  const script = process.env.npm_lifecycle_script;
  if (event && script && event !== 'npx') return `npm run ${event}   (${script})`;
  return ['tsx', ...process.argv.slice(1).map((a) => path.relative(process.cwd(), a) || a)].join(' ');
}

async function main(): Promise<void> {
  const began = nowUs();
  const workspace = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-bench-')));
  await writeFile(path.join(workspace, 'small.txt'), Array.from({ length: 20 }, (_, i) => `line ${i + 1}: the quick brown fox`).join('\n'));
  const probe = new HeapProbe();
  const entryMode = new Scheduler({ threads: 2, log: () => {}, entry: schedulerEntry() }).entryMode;
  const cpus = os.cpus();
  emit(`# Actor runtime benchmark\n`);
  emit(table(['run', ''], [
    ['machine', cpus[0]?.model ?? 'unknown'],
    ['cores', String(cpus.length)],
    ['node', process.version],
    ['load average (1 min) at start', fmt(os.loadavg()[0] ?? Number.NaN)],
    ['date', new Date().toISOString()],
    ['command', `\`${commandLine()}\``],
    ['scheduler threads boot from', entryMode === 'built' ? 'dist/ (built)' : 'src/ through tsx (dist/ is stale: run npm run build)'],
  ]));
  emit('');
  try {
    await crossingOverhead(workspace);
    const memory = await spawnAndMemory(workspace, probe);
    const recovered = await recovery(workspace);
    await codec(workspace);
    const perActor = memory.perActorWorker + memory.perActorMain;
    emit(`## Targets\n`);
    emit(table(['target', 'measured', 'met'], [
      [`memory per idle actor < ${kb(MEMORY_TARGET_BYTES)} (worker + main, after GC)`, kb(perActor), perActor < MEMORY_TARGET_BYTES ? 'yes' : 'no'],
      [`recovery < ${RECOVERY_TARGET_MS} ms (kill → successful reply)`, `p95 ${fmt(recovered.p95)} ms, max ${fmt(recovered.max)} ms`,
        recovered.max < RECOVERY_TARGET_MS ? 'yes' : recovered.p95 < RECOVERY_TARGET_MS ? 'at p95 only' : 'no'],
    ]));
    emit(`\nTotal run time ${fmt((nowUs() - began) / 1e6, 1)} s.`);
    await mkdir(path.join(here, 'results'), { recursive: true });
    await writeFile(path.join(here, 'results', 'actors.md'), `${out.join('\n')}\n`);
    process.stdout.write(`\nwrote ${path.relative(process.cwd(), path.join(here, 'results', 'actors.md'))}\n`);
  } finally {
    probe.close();
    await rm(workspace, { recursive: true, force: true });
  }
}

await main();
