// Where a Streamable HTTP call's wall time goes, by thread: one super-pi HTTP server per build (this
// checkout, and with --old another built checkout), 64 legacy sessions and 64 modern clients on each, in
// blocks alternated server by server and era by era (order reversed every other round, so the machine's
// load falls on all of them alike). Per block: wall time per call (1 ÷ calls/s), the bench client's CPU per
// call (this process), and the server's CPU per call split by thread: the main thread (HTTP parsing, the
// transport, the actor hop's main side), the scheduler workers (the core), and the rest (V8's helper
// threads, libuv's pool). When the main thread + the client's CPU per call come to the whole wall time per
// call while the cores are not all busy, the two take turns (what issue 27 found on stdio).
// Usage: npm run build && npx tsx bench/http-turns.ts [--old <checkout with dist/> | --old name=DIR,name=DIR] [--args '--threads 2|--threads 0'] [--ms 1500] [--rounds 4] [--flight 64] [--eras modern,legacy]

import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import path from 'node:path';
import { makeSandbox, repoRoot } from '../test/e2e/fixtures.ts';
import { checkReply, FILE, FILE_TEXT, startSuperPi, type Target } from './http.ts';
import { bounded, McpHttpSession, McpModernHttp } from './lib/mcp-http-client.ts';
import { fmt, percentile, table } from './lib/stats.ts';

const option = (name: string): string | undefined => {
  const at = process.argv.indexOf(name);
  return at < 0 ? undefined : process.argv[at + 1];
};
const oldRoot = option('--old');
const blockMs = Number(option('--ms') ?? 1500);
const rounds = Number(option('--rounds') ?? 4);
const flight = Number(option('--flight') ?? 64);
type Era = 'modern' | 'legacy';
const eras = (option('--eras') ?? 'modern,legacy').split(',') as Era[];

/** CPU µs and voluntary context switches (times it went to sleep) of every thread of `pid`, by tid. */
function threads(pid: number): Map<number, { us: number; sleeps: number }> {
  const out = new Map<number, { us: number; sleeps: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const sleeps = Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'))?.[1] ?? 0);
      out.set(Number(tid), { us: ((Number(f[11]) + Number(f[12])) / 100) * 1e6, sleeps });
    } catch (err) {
      // A thread that ended between the listing and the read: its time is not in this block's figures.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && (err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  }
  return out;
}

/**
 * The column a thread's time is charged to. Node 20 names every thread "node", so a thread is named by its
 * place in the process's start order: "main", then "+k" for the thread started k tids after it (V8's
 * helpers come first, the scheduler workers, the tool pool and libuv's pool later; the busy ones past V8's
 * helpers are the scheduler workers).
 */
function groupOf(pid: number, tid: number): string {
  return tid === pid ? 'main' : `+${tid - pid}`;
}

interface Block { calls: number; wallUs: number; clientUs: number; byGroup: Map<string, number>; latencies: number[]; mainSleeps: number; otherSleeps: number }

interface Server { readonly name: string; readonly target: Target; readonly legacy: McpHttpSession[]; readonly modern: McpModernHttp[] }

async function block(server: Server, era: Era, ms: number): Promise<Block> {
  const pid = server.target.pid;
  const t0 = threads(pid);
  const c0 = process.cpuUsage();
  const started = performance.now();
  const end = started + ms;
  let calls = 0;
  const latencies: number[] = [];
  await Promise.all(Array.from({ length: flight }, async (_, w) => {
    const client = era === 'modern' ? server.modern[w] as McpModernHttp : server.legacy[w] as McpHttpSession;
    while (performance.now() < end) {
      const s = performance.now();
      checkReply(await client.call('read', { path: FILE }));
      latencies.push(performance.now() - s);
      calls++;
    }
  }));
  const wallUs = (performance.now() - started) * 1000;
  const c = process.cpuUsage(c0);
  const byGroup = new Map<string, number>();
  let mainSleeps = 0;
  let otherSleeps = 0;
  for (const [tid, { us, sleeps }] of threads(pid)) {
    const g = groupOf(pid, tid);
    byGroup.set(g, (byGroup.get(g) ?? 0) + us - (t0.get(tid)?.us ?? 0));
    const slept = sleeps - (t0.get(tid)?.sleeps ?? 0);
    if (tid === pid) mainSleeps += slept;
    else otherSleeps += slept;
  }
  return { calls, wallUs, clientUs: c.user + c.system, byGroup, latencies, mainSleeps, otherSleeps };
}

const sandbox = await makeSandbox();
await writeFile(path.join(sandbox.ws, FILE), FILE_TEXT);
const servers: Server[] = [];
try {
  // --old DIR, or several as name=DIR,name=DIR: other built checkouts beside this one ("new").
  const others = (oldRoot ?? '').split(',').filter((o) => o !== '').map((o): [string, string] => (o.includes('=') ? [o.slice(0, o.indexOf('=')), path.resolve(o.slice(o.indexOf('=') + 1))] : ['old', path.resolve(o)]));
  const roots: [string, string | undefined][] = [['new', undefined], ...others];
  // --args "A|B": one server per build and per argument list (e.g. "--threads 2|--threads 0"), named by it.
  const argLists = (option('--args') ?? '').split('|').map((a) => a.trim().split(/\s+/).filter((x) => x !== ''));
  for (const [build, root] of roots) for (const args of argLists) {
    const name = args.length === 0 ? build : `${build} ${args.join(' ')}`;
    // A token starting with @ goes to NODE_OPTIONS (`@--max-semi-space-size=32`: V8 flags are the process's,
    // and a worker refuses them in its execArgv), the rest to the server.
    const nodeOptions = args.filter((a) => a.startsWith('@')).map((a) => a.slice(1)).join(' ');
    if (nodeOptions === '') delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = nodeOptions;
    const target = await startSuperPi(sandbox.ws, args.filter((a) => !a.startsWith('@')), [], root ?? repoRoot);
    delete process.env.NODE_OPTIONS;
    const legacy = eras.includes('legacy') ? await bounded(flight, flight, () => McpHttpSession.open(target.url)) : [];
    const modern = Array.from({ length: flight }, () => new McpModernHttp(target.url));
    servers.push({ name, target, legacy, modern });
  }
  const cells = servers.flatMap((s) => eras.map((era) => ({ s, era, key: `${s.name} ${era}` })));
  for (const c of cells) await block(c.s, c.era, 500);
  const acc = new Map<string, Block[]>(cells.map((c) => [c.key, []]));
  const load0 = loadavg()[0] ?? 0;
  for (let r = 0; r < rounds; r++) {
    for (const c of r % 2 === 0 ? cells : [...cells].reverse()) acc.get(c.key)?.push(await block(c.s, c.era, blockMs));
  }
  // Columns for the threads that used at least 2% of the server's CPU (the rest summed as "other").
  const totals = new Map<string, number>();
  for (const bs of acc.values()) for (const b of bs) for (const [g, us] of b.byGroup) totals.set(g, (totals.get(g) ?? 0) + us);
  const all = [...totals.values()].reduce((a, b) => a + b, 0);
  const shown = [...totals].filter(([, us]) => us >= all * 0.02).map(([g]) => g).sort((a, b) => (a === 'main' ? -1 : b === 'main' ? 1 : Number(a.slice(1)) - Number(b.slice(1))));
  for (const bs of acc.values()) for (const b of bs) {
    let other = 0;
    for (const [g, us] of b.byGroup) if (!shown.includes(g)) other += us;
    b.byGroup.set('other', other);
  }
  const groups = [...shown, 'other'];
  const rows = [...acc].map(([key, bs]) => {
    const calls = bs.reduce((a, b) => a + b.calls, 0);
    const wall = bs.reduce((a, b) => a + b.wallUs, 0);
    const per = (us: number) => fmt(us / calls, 1);
    const g = (name: string) => bs.reduce((a, b) => a + (b.byGroup.get(name) ?? 0), 0);
    const server = groups.reduce((a, name) => a + g(name), 0);
    const client = bs.reduce((a, b) => a + b.clientUs, 0);
    const lat = bs.flatMap((b) => b.latencies);
    const rates = bs.map((b) => fmt((b.calls / b.wallUs) * 1e6, 0)).join(' ');
    const sleeps = (k: 'mainSleeps' | 'otherSleeps') => fmt(bs.reduce((a, b) => a + b[k], 0) / calls, 3);
    // The least disturbed block (the machine is shared): the lowest CPU per call of any block, server and main thread.
    const serverOf = (b: Block) => [...b.byGroup].filter(([k]) => k !== 'other').reduce((a, [, us]) => a + us, 0) / b.calls;
    const minServer = fmt(Math.min(...bs.map(serverOf)), 1);
    const minMain = fmt(Math.min(...bs.map((b) => (b.byGroup.get('main') ?? 0) / b.calls)), 1);
    const minClient = fmt(Math.min(...bs.map((b) => b.clientUs / b.calls)), 1);
    return {
      summary: [key, fmt((calls / wall) * 1e6, 0), rates, per(wall), per(client), per(g('main')), per(server - g('main')), per(server), fmt((server + client) / wall, 2), fmt(g('main') / wall, 2), sleeps('mainSleeps'), sleeps('otherSleeps'), fmt(percentile(lat, 50), 2), minServer, minMain, minClient],
      byThread: [key, ...groups.map((name) => per(g(name)))],
    };
  });
  process.stdout.write(`${flight} in flight, ${rounds} rounds of ${blockMs} ms blocks; load average ${fmt(load0, 1)} → ${fmt(loadavg()[0] ?? 0, 1)}\n`);
  process.stdout.write(`${table(['server era', 'calls/s', 'per block', 'wall µs/call', 'client CPU/call', 'main CPU/call', 'other threads CPU/call', 'server CPU/call', 'cores busy (server+client)', 'main thread busy', 'main thread sleeps/call', 'other threads sleeps/call', 'p50 ms', 'server CPU/call, best block', 'main CPU/call, best block', 'client CPU/call, best block'], rows.map((r) => r.summary))}\n\n`);
  process.stdout.write(`server CPU per call by thread (µs; "+k": the thread started k tids after the main one):\n${table(['server era', ...groups], rows.map((r) => r.byThread))}\n`);
} finally {
  await Promise.all(servers.map((s) => Promise.all(s.legacy.map((l) => l.close())).catch(() => undefined)));
  await Promise.all(servers.map((s) => s.target.stop()));
  await sandbox.cleanup();
}
