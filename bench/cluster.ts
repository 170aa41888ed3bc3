// The cluster section (issue 14): what running on PostgreSQL costs against the embedded SQLite store, and
// what a second node behind a load balancer gives, measured in one run on this machine, as ratios.
//   (a) append latency of the store itself (p50, p99): PostgreSQL vs SQLite, in this process, blocks
//       interleaved A B B A; both flush each commit to disk (SQLite synchronous=FULL, PostgreSQL fsync=on).
//   (b) `tools/call read` over Streamable HTTP, 16 clients: one node on SQLite vs one node on PostgreSQL.
//   (c) the same load through `startRoundRobinProxy` (test/e2e/round-robin-proxy.ts): one node behind it
//       vs two nodes on one PostgreSQL behind it, so both sides pay the proxy. No session affinity: a
//       session's requests land on both nodes, which needs session forwarding or takeover; a run that
//       gets a 404 reports "(c) needs session forwarding" instead of a figure.
// PostgreSQL is started here (test/store/postgres-server.ts); without its binaries the section is skipped
// with the reason. Usage: npm run build && npx tsx bench/cluster.ts [--quick]   (or npm run bench -- --only cluster)

import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SyncStoreAdapter, type AsyncConversationStore } from '../src/store/async-store.ts';
import { PostgresConversationStore } from '../src/store/postgres-store.ts';
import { SqliteConversationStore } from '../src/store/sqlite-store.ts';
import { makeSandbox, type Sandbox, TEST_STATE_KEY } from '../test/e2e/fixtures.ts';
import { type RoundRobinProxy, startRoundRobinProxy } from '../test/e2e/round-robin-proxy.ts';
import { findPostgres, type PostgresServer, startPostgres } from '../test/store/postgres-server.ts';
import { checkReply, compare, type Comparison, cpuPerCall, drive, FILE, FILE_TEXT, OPEN_CONCURRENCY, rate, type Sample, startSuperPi, superPiEntry, type Target, WARMUP_MS } from './http.ts';
import { bounded, cpuMicros, McpHttpSession, McpModernHttp, readParams } from './lib/mcp-http-client.ts';
import { type BenchOptions, type BenchRow, type BenchSection, type BenchSectionRunner, isMain } from './lib/report.ts';
import { fmt, nowUs, percentile } from './lib/stats.ts';
import { STORE_PROBE_INTERVAL_MS } from '../src/limits.ts';

const COMMAND = 'npm run build && npx tsx bench/cluster.ts';
const TITLE = 'Cluster: PostgreSQL vs SQLite, one node vs two';
/** Clients of (b) and (c), each with its own session, in a closed loop. */
const CLIENTS = 16;

interface Plan {
  /** Appends per block of (a); four blocks per store. */
  readonly appendsPerBlock: number;
  /** Length of each timed block of (b) and (c). */
  readonly blockMs: number;
}

const FULL: Plan = { appendsPerBlock: 500, blockMs: 2500 };
const QUICK: Plan = { appendsPerBlock: 100, blockMs: 1000 };

/** What an entry of a harness task looks like in size: a model turn of a few hundred bytes. */
const PAYLOAD = { text: 'The parser reads the header first, then each record; the bug is in the record loop, which skips the last field when a line ends without a newline.', usage: { input: 1234, output: 56 } };

const ms = (v: number) => `${fmt(v, v >= 10 ? 1 : 2)} ms`;
const perS = (s: Sample) => `${fmt(rate(s), 0)}/s${s.errors > 0 ? ` (${s.errors} errors: ${s.firstError})` : ''}`;

// ---------------------------------------------------------------------------------------------------
// (a) append latency

interface AppendResult {
  readonly pg: number[];
  readonly sqlite: number[];
}

/** `count` appends to one conversation, one at a time; each one's latency in ms. */
async function appends(store: AsyncConversationStore, conversationId: string, count: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = nowUs();
    await store.append(conversationId, 'model', PAYLOAD);
    out.push((nowUs() - t0) / 1000);
  }
  return out;
}

async function appendLatency(pgUrl: string, plan: Plan): Promise<AppendResult> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'superpi-bench-sqlite-'));
  const stores: AsyncConversationStore[] = [];
  try {
    const pg = await PostgresConversationStore.open(pgUrl);
    stores.push(pg);
    const sqlite = new SyncStoreAdapter(SqliteConversationStore.open(path.join(dir, 'bench.db')));
    stores.push(sqlite);
    const conversation = { principal: 'bench', sessionId: 'bench', harness: 'super-pi-code' };
    const [pc, sc] = [await pg.createConversation(conversation), await sqlite.createConversation(conversation)];
    // Warm-up (connections, statement plans, page cache), not counted.
    await appends(pg, pc.id, 50);
    await appends(sqlite, sc.id, 50);
    const result: AppendResult = { pg: [], sqlite: [] };
    for (const side of ['pg', 'sqlite', 'sqlite', 'pg'] as const) {
      const lat = side === 'pg' ? await appends(pg, pc.id, plan.appendsPerBlock) : await appends(sqlite, sc.id, plan.appendsPerBlock);
      result[side].push(...lat);
    }
    return result;
  } finally {
    for (const s of stores) await s.close();
    await rm(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------
// (b) and (c): tools/call read over HTTP

/** `CLIENTS` sessions opened at `url`, or the error that stopped one from opening. */
async function openSessions(url: string): Promise<McpHttpSession[] | Error> {
  try {
    return await bounded(CLIENTS, OPEN_CONCURRENCY, () => McpHttpSession.open(url));
  } catch (err) {
    return err as Error;
  }
}

/** A closed loop of reads on each session for `ms`; `pid` is whose CPU the sample records (not reported here). */
function reads(pid: number, sessions: readonly McpHttpSession[], runMs: number): Promise<Sample> {
  return drive(pid, sessions.length, runMs, async (w) => {
    checkReply(await (sessions[w] as McpHttpSession).call('read', readParams(FILE).arguments));
  });
}

/** As `reads`, by 2026-07-28 clients: no session, every request its own context. */
async function modernReads(pids: readonly number[], clients: readonly McpModernHttp[], runMs: number): Promise<Sample> {
  const others = pids.slice(1);
  const before = others.map(cpuMicros);
  const sample = await drive(pids[0] as number, clients.length, runMs, async (w) => {
    checkReply(await (clients[w] as McpModernHttp).call('read', { path: FILE }));
  });
  // The CPU of every node serving the clients, so CPU per call compares one node with two.
  others.forEach((pid, i) => (sample.serverCpuUs += cpuMicros(pid) - (before[i] as number)));
  return sample;
}

/** Issue 24: two nodes serve 2026-07-28 requests at least this fraction of one node's rate, through the same proxy. */
const MODERN_TWO_NODE_TARGET = 0.9;

const isNotFound = (message: string | null | undefined) => message !== null && message !== undefined && /HTTP 404/.test(message);

type TwoNodes = { readonly kind: 'measured'; readonly cmp: Comparison } | { readonly kind: 'needs-forwarding'; readonly why: string } | { readonly kind: 'failed'; readonly why: string };

/**
 * The server runs as the `postgres` user when this runs as root, under os.tmpdir(); the suite runner's
 * per-section temp dir sits in a 0700 scratch dir of root's, which that user cannot pass through. Every
 * directory of ours on the way gets search permission (not read: the names inside stay unlisted).
 */
async function letPostgresThrough(dir: string): Promise<void> {
  for (let d = path.resolve(dir); d !== path.dirname(d); d = path.dirname(d)) {
    const s = await stat(d);
    if (s.uid === process.getuid?.() && (s.mode & 0o001) === 0) await chmod(d, (s.mode & 0o7777) | 0o011);
  }
}

// ---------------------------------------------------------------------------------------------------

export const run: BenchSectionRunner = async (options: BenchOptions = {}): Promise<BenchSection> => {
  const plan = options.quick ? QUICK : FULL;
  const progress = options.progress ?? ((line: string) => process.stderr.write(`  ${line}\n`));
  const found = findPostgres();
  if (!found.ok) return skipped(found.reason);
  let pg: PostgresServer | null = null;
  let box: Sandbox | null = null;
  const nodes: Target[] = [];
  const proxies: RoundRobinProxy[] = [];
  const load = os.loadavg()[0] ?? Number.NaN;
  try {
    progress('cluster: starting PostgreSQL (fsync on)');
    if (found.user !== null) await letPostgresThrough(os.tmpdir());
    pg = await startPostgres(found, { fsync: true });
    box = await makeSandbox();
    await writeFile(path.join(box.ws, FILE), FILE_TEXT);

    progress(`cluster: (a) append latency, ${2 * plan.appendsPerBlock} appends per store`);
    const appended = await appendLatency(await pg.createDatabase(), plan);

    progress('cluster: (b) one node on SQLite vs one node on PostgreSQL');
    const database = await pg.createDatabase();
    // A node on PostgreSQL needs the cluster's state key; both nodes read the same file.
    const keyFile = path.join(box.base, 'state-key');
    await writeFile(keyFile, TEST_STATE_KEY, { mode: 0o600 });
    const sqliteNode = await startSuperPi(box.ws);
    nodes.push(sqliteNode);
    const nodeA = await startSuperPi(box.ws, ['--store', database, '--node-id', 'bench-a', '--state-key-file', keyFile]);
    nodes.push(nodeA);
    const [onSqlite, onPg] = [await openSessions(sqliteNode.url), await openSessions(nodeA.url)];
    if (onSqlite instanceof Error) throw onSqlite;
    if (onPg instanceof Error) throw onPg;
    for (const sessions of [onSqlite, onPg]) checkReply(await (sessions[0] as McpHttpSession).call('read', readParams(FILE).arguments));
    const storeCmp = await compare((side, runMs) => (side === 'a' ? reads(sqliteNode.pid, onSqlite, runMs) : reads(nodeA.pid, onPg, runMs)), plan.blockMs, false);
    await Promise.all([...onSqlite, ...onPg].map((s) => s.close()));
    await sqliteNode.stop();
    nodes.splice(nodes.indexOf(sqliteNode), 1);

    progress('cluster: (c) one node vs two nodes on PostgreSQL, each behind the round-robin proxy');
    const nodeB = await startSuperPi(box.ws, ['--store', database, '--node-id', 'bench-b', '--state-key-file', keyFile]);
    nodes.push(nodeB);
    const one = await startRoundRobinProxy([nodeA.url.replace(/\/mcp$/, '')]);
    proxies.push(one);
    const two = await startRoundRobinProxy([nodeA.url, nodeB.url].map((u) => u.replace(/\/mcp$/, '')));
    proxies.push(two);
    const viaOne = await openSessions(`${one.url}/mcp`);
    if (viaOne instanceof Error) throw viaOne;
    const viaTwo = await openSessions(`${two.url}/mcp`);
    let twoNodes: TwoNodes;
    let oneBehindProxy: Sample | null = null;
    if (viaTwo instanceof Error) {
      twoNodes = isNotFound(viaTwo.message)
        ? { kind: 'needs-forwarding', why: `opening a session through the proxy: ${viaTwo.message.slice(0, 160)}` }
        : { kind: 'failed', why: viaTwo.message.slice(0, 200) };
      // The one-node side alone still shows what the proxy costs.
      await reads(nodeA.pid, viaOne, WARMUP_MS);
      oneBehindProxy = await reads(nodeA.pid, viaOne, 2 * plan.blockMs);
    } else {
      const cmp = await compare((side, runMs) => (side === 'a' ? reads(nodeA.pid, viaOne, runMs) : reads(nodeA.pid, viaTwo, runMs)), plan.blockMs, false);
      twoNodes = isNotFound(cmp.b.firstError) ? { kind: 'needs-forwarding', why: `${cmp.b.errors} calls answered 404, the first: ${String(cmp.b.firstError).slice(0, 160)}` } : { kind: 'measured', cmp };
      oneBehindProxy = cmp.a;
      await Promise.all(viaTwo.map((s) => s.close().catch(() => undefined)));
    }
    await Promise.all(viaOne.map((s) => s.close()));

    progress('cluster: (d) 2026-07-28 clients (no session): one node vs two nodes, each behind the round-robin proxy');
    const modernOne = Array.from({ length: CLIENTS }, () => new McpModernHttp(`${one.url}/mcp`));
    const modernTwo = Array.from({ length: CLIENTS }, () => new McpModernHttp(`${two.url}/mcp`));
    for (const clients of [modernOne, modernTwo]) checkReply(await (clients[0] as McpModernHttp).call('read', { path: FILE }));
    // What a node costs with nothing to serve (store probes, leases, takeover passes), per second.
    const idle0 = cpuMicros(nodeB.pid);
    await new Promise((r) => setTimeout(r, 2000));
    const idleCpuPerS = (cpuMicros(nodeB.pid) - idle0) / 2;
    const modernCmp = await compare((side, runMs) => (side === 'a' ? modernReads([nodeA.pid], modernOne, runMs) : modernReads([nodeA.pid, nodeB.pid], modernTwo, runMs)), plan.blockMs, false);

    progress('cluster: (e) the same clients without the proxy: all to one node vs half to each node');
    const directOne = Array.from({ length: CLIENTS }, () => new McpModernHttp(nodeA.url));
    const directTwo = Array.from({ length: CLIENTS }, (_, i) => new McpModernHttp((i % 2 === 0 ? nodeA : nodeB).url));
    const directCmp = await compare((side, runMs) => (side === 'a' ? modernReads([nodeA.pid], directOne, runMs) : modernReads([nodeA.pid, nodeB.pid], directTwo, runMs)), plan.blockMs, false);
    return section(plan, appended, storeCmp, oneBehindProxy, twoNodes, load, two.hits, modernCmp, idleCpuPerS, directCmp);
  } finally {
    for (const p of proxies) await p.close();
    await Promise.all(nodes.map((n) => n.stop()));
    await box?.cleanup();
    await pg?.stop();
  }
};

function skipped(reason: string): BenchSection {
  return {
    title: TITLE,
    command: COMMAND,
    method: 'Needs a PostgreSQL server, which the section starts itself from the installed binaries.',
    rows: [{ measure: 'cluster section', ours: `skipped: ${reason}`, peer: '', peerName: '', ratio: null, target: '', met: null }],
    notes: [],
  };
}

function section(plan: Plan, appended: AppendResult, storeCmp: Comparison, oneBehindProxy: Sample, twoNodes: TwoNodes, load: number, hits: ReadonlyMap<string, number>, modern: Comparison, idleCpuPerS: number, direct: Comparison): BenchSection {
  const rows: BenchRow[] = [];
  for (const q of [50, 99]) {
    const [p, s] = [percentile(appended.pg, q), percentile(appended.sqlite, q)];
    rows.push({ measure: `(a) store append, one at a time: p${q} latency`, ours: `${ms(p)} (PostgreSQL)`, peer: ms(s), peerName: 'SQLite', ratio: p / s, target: '', met: null });
  }
  const { a: sq, b: pgs } = storeCmp;
  rows.push({ measure: `(b) HTTP tools/call read, ${CLIENTS} clients, one node: calls/s`, ours: `${perS(pgs)} (PostgreSQL)`, peer: perS(sq), peerName: 'SQLite', ratio: rate(pgs) / rate(sq), target: '', met: null });
  for (const q of [50, 99]) {
    const [p, s] = [percentile(pgs.latencies, q), percentile(sq.latencies, q)];
    rows.push({ measure: `(b) HTTP tools/call read, ${CLIENTS} clients, one node: p${q} latency`, ours: `${ms(p)} (PostgreSQL)`, peer: ms(s), peerName: 'SQLite', ratio: p / s, target: '', met: null });
  }
  const cLabel = `(c) HTTP tools/call read, ${CLIENTS} clients, through the round-robin proxy: calls/s`;
  if (twoNodes.kind === 'measured') {
    const { a, b } = twoNodes.cmp;
    rows.push({ measure: cLabel, ours: `${perS(b)} (two nodes)`, peer: perS(a), peerName: 'one node', ratio: rate(b) / rate(a), target: '', met: null });
  } else {
    rows.push({ measure: cLabel, ours: twoNodes.kind === 'needs-forwarding' ? '(c) needs session forwarding' : `two nodes failed: ${twoNodes.why}`, peer: perS(oneBehindProxy), peerName: 'one node', ratio: null, target: '', met: null });
  }
  const modernRatio = rate(modern.b) / rate(modern.a);
  rows.push({ measure: `(d) HTTP tools/call read by ${CLIENTS} 2026-07-28 clients (no session), through the round-robin proxy: calls/s`, ours: `${perS(modern.b)} (two nodes)`, peer: perS(modern.a), peerName: 'one node', ratio: modernRatio, target: `≥ ${MODERN_TWO_NODE_TARGET}×`, met: modernRatio >= MODERN_TWO_NODE_TARGET });
  rows.push({ measure: `(e) the same ${CLIENTS} 2026-07-28 clients without the proxy, half of them to each node: calls/s`, ours: `${perS(direct.b)} (two nodes)`, peer: perS(direct.a), peerName: 'one node', ratio: rate(direct.b) / rate(direct.a), target: '', met: null });
  const notes: string[] = [];
  notes.push(`Load average (1 min) at the start of the section: ${fmt(load)} (2 cores shared by the client, the nodes, PostgreSQL and anything else running).`);
  notes.push(`(a): ${appended.pg.length} appends per store after 50 unmeasured; p50/p99 PostgreSQL ${ms(percentile(appended.pg, 50))}/${ms(percentile(appended.pg, 99))}, SQLite ${ms(percentile(appended.sqlite, 50))}/${ms(percentile(appended.sqlite, 99))}.`);
  notes.push(`(b): \`read\` does not touch the conversation store, so these rows show what running on PostgreSQL costs a node's ordinary calls (its store probe every ${STORE_PROBE_INTERVAL_MS / 1000} s, the takeover passes), not store writes; those are (a). PostgreSQL ÷ SQLite calls/s per pair of adjacent blocks: ${storeCmp.pairRatios.map((r) => fmt(1 / r, 2)).join(', ')} (the spread is the machine's noise). Server CPU per call (all the node's threads, /proc), which other work on the machine moves less than throughput: PostgreSQL ${fmt(cpuPerCall(pgs), 0)} µs, SQLite ${fmt(cpuPerCall(sq), 0)} µs (${fmt(cpuPerCall(pgs) / cpuPerCall(sq), 2)}×).`);
  if (twoNodes.kind === 'needs-forwarding') {
    notes.push(`(c) needs session forwarding: the proxy has no session affinity, so a session opened on one node sends its next request to the other, which does not hold it (${twoNodes.why}). No two-node figure is given; the one-node figure behind the same proxy is ${perS(oneBehindProxy)}.`);
  } else if (twoNodes.kind === 'measured') {
    notes.push(`(c): requests per node through the two-node proxy: ${[...hits].map(([node, n]) => `${node} ${fmt(n, 0)}`).join(', ')}. On 2 cores, a second node adds no CPU: the ratio shows what spreading sessions over processes costs or gains, not what a second machine would.`);
  }
  notes.push(`(d): a 2026-07-28 request names no session, so whichever node it reaches serves it from a session it keeps for that principal (src/transports/stateless-pool.ts), with no lookup and no forwarding. Two ÷ one per pair of adjacent blocks: ${modern.pairRatios.map((r) => fmt(1 / r, 2)).join(', ')}. Server CPU per call (every node serving, /proc): one node ${fmt(cpuPerCall(modern.a), 0)} µs, two nodes ${fmt(cpuPerCall(modern.b), 0)} µs; an idle node uses ${fmt(idleCpuPerS / 1000, 1)} ms of CPU a second.`);
  notes.push(`(e): no proxy and no forwarding, each client talking to one node as a DNS round robin would place it: what two server processes cost against one on this machine's 2 cores, which (d) pays too. Two ÷ one per pair of adjacent blocks: ${direct.pairRatios.map((r) => fmt(1 / r, 2)).join(', ')}. Server CPU per call (every node serving): one node ${fmt(cpuPerCall(direct.a), 0)} µs, two nodes ${fmt(cpuPerCall(direct.b), 0)} µs.`);
  return {
    title: TITLE,
    command: COMMAND,
    method: `PostgreSQL 15 started by the section (test/store/postgres-server.ts, fsync on, loopback TCP); super-pi nodes as \`startSuperPi\` of \`bench/http.ts\` runs them (${superPiEntry()}). ` +
      `(a) \`append\` of a ${JSON.stringify(PAYLOAD).length}-byte entry to one conversation, one at a time, through each store's async interface in this process (SQLite: a file in a temp dir, WAL, synchronous=FULL); blocks of ${plan.appendsPerBlock} in the order PostgreSQL, SQLite, SQLite, PostgreSQL; ratio PostgreSQL ÷ SQLite. ` +
      `(b) ${CLIENTS} clients, one session each, \`tools/call read\` of a ${FILE_TEXT.length}-byte file in a closed loop (\`bench/lib/mcp-http-client.ts\`): a node on the default SQLite store vs a node with \`--store postgres://…\`; ${WARMUP_MS / 1000} s warm-up each, then ${plan.blockMs / 1000} s blocks SQLite, PostgreSQL, PostgreSQL, SQLite; ratio PostgreSQL ÷ SQLite. ` +
      `(c) the same load through \`startRoundRobinProxy\` (each request to the next node, no affinity; sessions opened through it): one node behind it vs two nodes (same database) behind it; ratio two ÷ one. (d) as (c), by ${CLIENTS} 2026-07-28 clients (\`McpModernHttp\`: no initialize, context in \`_meta\`, the \`Mcp-Method\`/\`Mcp-Name\` headers), blocks one, two, two, one; ratio two ÷ one. (e) as (d) without the proxy: every client to the first node vs clients alternately to each node.`,
    rows,
    notes,
  };
}

if (isMain(import.meta.url)) {
  const { printSection } = await import('./run.ts');
  printSection(await run({ quick: process.argv.includes('--quick') }));
}
