// The layering of src/, read from its import statements: no import cycle between files; the actor
// runtime and the supervisor are a library that imports nothing of the application; the protocol core
// imports only itself, the harness definitions and the pure tool catalog; and no layer imports one above it.

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cyclesOf, type ImportEdge, importsOf, readGraph, sourceFiles } from './import-graph.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const graph = readGraph(root, 'src');
const internal = graph.filter((e) => !e.external);

/** The bottom layer, which imports nothing of src/: the library below the application may use it too. */
const FOUNDATION: readonly string[] = ['src/time/', 'src/limits.ts', 'src/limits/', 'src/log/guarded.ts', 'src/log/stderr-sink.ts', 'src/log/thread-output.ts'];

/**
 * The layers, lowest first. A file may import its own layer and any layer below; never one above.
 * A file belongs to the layer of the longest prefix that names it, so a few files sit below the rest of
 * their folder where the rooms above them share them.
 */
const LAYERS: readonly { readonly name: string; readonly why: string; readonly paths: readonly string[] }[] = [
  { name: 'foundation', why: 'imports nothing: the clock everything that waits shares, the named limits and defaults, the guard every event callback is wrapped in, the bounded stderr queue every thread\'s output goes through', paths: FOUNDATION },
  { name: 'library', why: 'generic: actors, mailboxes, threads, supervision; knows nothing of MCP', paths: ['src/actors/', 'src/supervisor/'] },
  {
    name: 'contract',
    why: 'pure data every room shares: harness ids, tool definitions and schemas, the tool contract',
    paths: ['src/harness/ids.ts', 'src/tools/definition.ts', 'src/tools/definitions/', 'src/tools/catalog.ts', 'src/tools/contract.ts'],
  },
  { name: 'domain', why: 'harness policies and prompts, model providers, the durable store', paths: ['src/harness/', 'src/model/', 'src/store/'] },
  {
    name: 'protocol',
    why: 'the pure MCP core, the operator log, principals, and the framing, origin checks, quota and transport contract the rooms above share',
    paths: ['src/mcp/', 'src/log/', 'src/auth/', 'src/transports/line-framer.ts', 'src/transports/origin.ts', 'src/transports/session-quota.ts', 'src/transports/session-host.ts'],
  },
  { name: 'tools', why: 'tool bodies, their runner and the tool pool', paths: ['src/tools/'] },
  { name: 'task', why: 'a harness task: core, actor, host, undo', paths: ['src/task/'] },
  { name: 'connection', why: 'one MCP session: the connection actor, its effects, its main-thread host', paths: ['src/connection/'] },
  { name: 'observer', why: 'reads the rooms below for /metrics and the observer page', paths: ['src/observer/'] },
  { name: 'cluster', why: 'sessions on any node: the node registry lease, checkpoint saves, forwarding, takeover', paths: ['src/cluster/'] },
  { name: 'server', why: 'the supervision tree, thread entry points, chaos', paths: ['src/server/'] },
  { name: 'transports', why: 'stdio, Streamable HTTP, WebSocket: move bytes into sessions of the server', paths: ['src/transports/'] },
  { name: 'entry', why: 'the command line and the package entry', paths: ['src/cli/', 'src/index.ts'] },
];

/** What src/mcp may import besides itself and src/harness: the named limits, the tool catalog, pure data (see tools/contract.ts). */
const MCP_MAY_IMPORT = ['src/limits.ts', 'src/limits/', 'src/mcp/', 'src/harness/', 'src/tools/catalog.ts', 'src/tools/definition.ts', 'src/tools/definitions/'];

function layerOf(file: string): number {
  let best = -1;
  let bestLength = -1;
  LAYERS.forEach((layer, i) => {
    for (const p of layer.paths) {
      if ((p.endsWith('/') ? file.startsWith(p) : file === p) && p.length > bestLength) {
        best = i;
        bestLength = p.length;
      }
    }
  });
  return best;
}

const show = (e: ImportEdge) => `${e.from} imports ${e.to}${e.typeOnly ? ' (types only)' : ''}`;

/** A rule over a graph: the edges it forbids. Kept as functions so they can be checked on a made-up graph too. */
const rules = {
  library: (edges: readonly ImportEdge[]) =>
    edges.filter((e) => !e.external && !FOUNDATION.some((p) => e.to.startsWith(p)) && ['src/actors/', 'src/supervisor/'].some((lib) => e.from.startsWith(lib) && !e.to.startsWith(lib))),
  mcp: (edges: readonly ImportEdge[]) =>
    edges.filter((e) => !e.external && !e.typeOnly && e.from.startsWith('src/mcp/') && !MCP_MAY_IMPORT.some((p) => (p.endsWith('/') ? e.to.startsWith(p) : e.to === p))),
  upward: (edges: readonly ImportEdge[]) => edges.filter((e) => !e.external && layerOf(e.to) > layerOf(e.from)),
};

test('the scan reads the imports of src/ (a reader that found none would pass every rule)', () => {
  assert.ok(internal.length > 300, `only ${internal.length} imports between files of src/`);
  assert.ok(internal.some((e) => e.from === 'src/server/application.ts' && e.to === 'src/actors/scheduler.ts'));
  assert.ok(internal.some((e) => e.from === 'src/tools/tool-pool-boot.mjs' && e.to === 'src/tools/tool-pool-worker.ts'), 'a dynamic import is read');
  assert.equal(
    importsOf('src/x/a.ts', "import type { A } from './b.ts';\nimport {\n  type C,\n  D,\n} from '../y/c.ts';\nimport { type E } from 'node:fs';\n// import { F } from './f.ts';\n"),
    [
      { from: 'src/x/a.ts', to: 'src/x/b.ts', external: false, typeOnly: true },
      { from: 'src/x/a.ts', to: 'src/y/c.ts', external: false, typeOnly: false },
      { from: 'src/x/a.ts', to: 'node:fs', external: true, typeOnly: true },
    ],
  );
});

test('every file of src/ belongs to a layer', () => {
  const placeless = sourceFiles(root, 'src').filter((f) => layerOf(f) < 0);
  assert.equal(placeless, [], 'a new folder needs a place in LAYERS');
});

test('no import cycle between files of src/', () => {
  const cycles = cyclesOf(graph);
  assert.equal(cycles.map((c) => c.join(' -> ')), []);
  // The detector itself finds a cycle, and only the cycle.
  const e = (from: string, to: string): ImportEdge => ({ from, to, external: false, typeOnly: false });
  assert.equal(cyclesOf([e('a', 'b'), e('b', 'c'), e('c', 'a'), e('c', 'd')]), [['a', 'b', 'c', 'a']]);
});

test('src/actors and src/supervisor import nothing outside themselves but the foundation (src/time), node: built-ins and npm packages', () => {
  assert.equal(rules.library(graph).map(show), []);
  assert.equal(rules.library([{ from: 'src/actors/scheduler.ts', to: 'src/server/thread-entries.ts', external: false, typeOnly: true }]).length, 1);
});

test('src/mcp imports only itself, src/harness, the tool catalog, and types', () => {
  assert.equal(rules.mcp(graph).map(show), []);
  assert.equal(rules.mcp([{ from: 'src/mcp/handle.ts', to: 'src/tools/read.ts', external: false, typeOnly: false }]).length, 1);
});

test('no layer imports a layer above it', () => {
  assert.equal(rules.upward(graph).map((e) => `${show(e)}: ${LAYERS[layerOf(e.from)]?.name} below ${LAYERS[layerOf(e.to)]?.name}`), []);
  assert.equal(rules.upward([{ from: 'src/tools/tool-pool.ts', to: 'src/connection/effect-runner.ts', external: false, typeOnly: true }]).length, 1);
});

test.run();
