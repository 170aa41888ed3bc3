#!/usr/bin/env node
// The `super-pi` command. Runs the bundle in dist/ when it is at least as new as every file in src/
// (cold start without a TypeScript loader, compiled from the V8 code cache: src/cli/code-cache.ts), else
// the TypeScript source through tsx. An installed package has no src/ (and no tsx): there the bundle is
// all there is. CommonJS (bin/package.json), as the bundle is: see scripts/build.mjs.
'use strict';
const { existsSync, readdirSync, statSync } = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const root = path.resolve(__dirname, '..');
const bundle = path.join(root, 'dist', 'super-pi.cjs');
const start = path.join(root, 'dist', 'super-pi-start.cjs');
const src = path.join(root, 'src');

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(full) : statSync(full).mtimeMs);
  }
  return t;
}

/** An error the command did not handle ends the process as an uncaught exception does (stack on stderr, exit 1). */
function fail(err) {
  process.nextTick(() => {
    throw err;
  });
}

if (existsSync(start) && existsSync(bundle) && (!existsSync(src) || statSync(bundle).mtimeMs >= newest(src))) {
  require(start).startCommand(bundle).catch(fail);
} else {
  import('tsx/esm/api')
    .then(({ register }) => {
      register();
      return import(pathToFileURL(path.join(src, 'cli', 'bin.ts')).href);
    })
    .then(({ runCommand }) => runCommand())
    .catch(fail);
}
