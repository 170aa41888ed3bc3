#!/usr/bin/env node
// The `super-pi` command. Runs the bundle in dist/ when it is at least as new as every file in src/
// (cold start without a TypeScript loader), else the TypeScript source through tsx. An installed package
// has no src/ (and no tsx): there the bundle is all there is.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bundle = path.join(root, 'dist', 'super-pi.js');
const src = path.join(root, 'src');

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(full) : statSync(full).mtimeMs);
  }
  return t;
}

if (existsSync(bundle) && (!existsSync(src) || statSync(bundle).mtimeMs >= newest(src))) {
  await import(pathToFileURL(bundle).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(path.join(src, 'cli', 'bin.ts')).href);
}
