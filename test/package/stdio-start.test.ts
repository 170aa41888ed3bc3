// What a stdio start loads: the modules the `super-pi` bundle imports statically (dist/super-pi.js and
// the chunks it reaches through `import … from`), read from the bundle npm ships. The HTTP and WebSocket
// transport (with ws) and isomorphic-git sit behind dynamic imports in chunks of their own, so a host's
// stdio server neither parses nor evaluates them. Needs dist/ (`npm test` builds it first).

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist');
const STATIC_IMPORT = /^import\s[^;]*?from\s*"(\.\.?\/[^"]+)"/gm;
const DYNAMIC_IMPORT = /import\("(\.\.?\/[^"]+)"\)/g;

/** The files a start evaluates: the entry and every relative static import, transitively. */
function staticGraph(entry: string): Map<string, string> {
  const seen = new Map<string, string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    const source = readFileSync(file, 'utf8');
    seen.set(file, source);
    for (const m of source.matchAll(STATIC_IMPORT)) visit(path.resolve(path.dirname(file), m[1] as string));
  };
  visit(entry);
  return seen;
}

const graph = staticGraph(path.join(dist, 'super-pi.js'));
const loaded = [...graph.values()].join('\n');

test('a stdio start does not load the WebSocket server (ws) or the HTTP transport', () => {
  assert.not.ok(loaded.includes('node_modules/ws/lib/websocket-server.js'), 'ws is in the static graph');
  assert.not.ok(/\bfunction startHttpServer\b/.test(loaded), 'the HTTP transport is in the static graph');
});

test('a stdio start does not load isomorphic-git', () => {
  assert.not.ok(loaded.includes('node_modules/isomorphic-git/'), 'isomorphic-git is in the static graph');
});

test('both are still in the bundle, behind a dynamic import the start can follow', () => {
  const dynamic = [...loaded.matchAll(DYNAMIC_IMPORT)].map((m) => m[1] as string);
  const lazy = [...graph.keys()].flatMap((file) => [...(graph.get(file) as string).matchAll(DYNAMIC_IMPORT)].map((m) => readFileSync(path.resolve(path.dirname(file), m[1] as string), 'utf8')));
  assert.ok(dynamic.length >= 2, `dynamic imports: ${dynamic.join(', ')}`);
  assert.ok(lazy.some((s) => /\bfunction startHttpServer\b/.test(s)), 'a lazily loaded chunk holds the HTTP transport');
  assert.ok(lazy.some((s) => s.includes('node_modules/isomorphic-git/')), 'a lazily loaded chunk holds isomorphic-git');
});

test.run();
