// runner-timeout-ms: 900000
// The package as a user gets it: `npm pack` of a copy of the checkout (its `prepare` builds dist/ and
// the declarations), installed with `--omit=dev` into an empty folder. The installed `super-pi` must
// serve stdio and HTTP with plain `node` (no tsx, no sources), and `import … from 'super-pi'` must work
// and type-check. The install fetches better-sqlite3's prebuilt binary from GitHub when it can (seconds);
// without network it compiles it: 2 min on two idle cores, 5-6 min on two shared with the rest of the
// suite — hence the runner timeout above, which only kills a hung install.

import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** What `npm pack` reads from a checkout: the package's files and what its `prepare` builds them from. */
const CHECKOUT_FILES = ['package.json', 'README.md', 'LICENSE', 'tsconfig.json', 'tsconfig.types.json', 'bin', 'scripts', 'src'];
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** npm from the local cache where it can, and nothing the test does not need. */
const NPM_QUIET = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];

const pkg = suite('the packed package installed with --omit=dev');
let tmp: string;
let installed: string;
let ws: string;
const children = new Set<ChildProcess>();

pkg.before(async () => {
  tmp = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-pack-')));
  const checkout = path.join(tmp, 'checkout');
  await mkdir(checkout);
  for (const f of CHECKOUT_FILES) await cp(path.join(repo, f), path.join(checkout, f), { recursive: true });
  // The build tools (esbuild, tsc) are the checkout's own dev dependencies.
  await symlink(await realpath(path.join(repo, 'node_modules')), path.join(checkout, 'node_modules'));
  const tarball = execFileSync(npm, ['pack', '--pack-destination', tmp, ...NPM_QUIET], { cwd: checkout, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').pop() as string;
  installed = path.join(tmp, 'app');
  await mkdir(installed);
  await writeFile(path.join(installed, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  execFileSync(npm, ['install', '--omit=dev', ...NPM_QUIET, path.join(tmp, tarball)], { cwd: installed, stdio: ['ignore', 'inherit', 'inherit'] });
  ws = path.join(tmp, 'ws');
  await mkdir(ws);
  await writeFile(path.join(ws, 'hello.txt'), 'hello from the workspace\n');
});

pkg.after(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const bin = (): string => path.join(installed, 'node_modules', '.bin', 'super-pi');

/** `anonymous`: an HTTP caller without a token, who is shown only the tools it may call (read-only ones). */
async function exercise(client: Client, caller: 'local' | 'anonymous' = 'local'): Promise<void> {
  assert.is(client.getServerVersion()?.name, 'super-pi');
  const { tools } = await client.listTools();
  assert.equal(tools.map((t) => t.name), caller === 'local' ? ['read', 'write', 'edit', 'bash', 'grep', 'find', 'ls', 'harness_task'] : ['read', 'grep', 'find', 'ls']);
  const r = await client.callTool({ name: 'read', arguments: { path: 'hello.txt' } });
  assert.not.ok(r.isError, JSON.stringify(r));
  assert.match(JSON.stringify(r.content), /hello from the workspace/);
}

pkg('ships the bundle, the bin, the declarations and the licence, and neither sources, tests nor benchmarks', async () => {
  const root = path.join(installed, 'node_modules', 'super-pi');
  const top = (await readdir(root)).sort();
  assert.equal(top, ['LICENSE', 'README.md', 'bin', 'dist', 'package.json']);
  assert.match(await readFile(path.join(root, 'LICENSE'), 'utf8'), /^MIT License\n\nCopyright \(c\) \d{4} the super-pi authors\n/);
  const dist = await readdir(path.join(root, 'dist'));
  for (const f of ['super-pi.cjs', 'super-pi-start.cjs', 'index.js', 'scheduler-worker.js', 'tool-pool-worker.js', 'git-status-worker.js', 'types']) assert.ok(dist.includes(f), `dist/${f}`);
  assert.not.ok(dist.some((f) => f.endsWith('.map')), 'no source maps (they would carry the sources)');
});

pkg('installs as runtime dependencies only what the bundle cannot hold: no dev tool, no bundled package', async () => {
  const modules = await readdir(path.join(installed, 'node_modules'));
  assert.ok(modules.includes('better-sqlite3'));
  for (const dev of ['tsx', 'typescript', 'esbuild', '@modelcontextprotocol', 'uvu', 'ajv', 'ws', 'xstate', 'isomorphic-git', 'msgpackr', 're2js']) {
    assert.not.ok(modules.includes(dev), `${dev} is not installed`);
  }
  const manifest = JSON.parse(await readFile(path.join(installed, 'node_modules', 'super-pi', 'package.json'), 'utf8')) as { dependencies: Record<string, string>; optionalDependencies: Record<string, string> };
  assert.equal(Object.keys(manifest.dependencies).sort(), ['piscina', 'sharp']);
  // Optional: Node >= 22.13 stores through node:sqlite; only Node 20 needs the native addon (docs/sqlite-driver.md).
  assert.equal(Object.keys(manifest.optionalDependencies), ['better-sqlite3']);
});

pkg('the installed `super-pi --stdio` (actors on the main thread, as a host starts it) serves initialize, tools/list and a read to the SDK client', async () => {
  const transport = new StdioClientTransport({ command: bin(), args: ['--stdio', '--workspace', ws, '--tool-threads', '1'], env: { ...getDefaultEnvironment(), SUPERPI_HOME: path.join(tmp, 'home-sdk') }, cwd: installed, stderr: 'ignore' });
  const client = new Client({ name: 'packed-install-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    await exercise(client);
  } finally {
    await client.close();
  }
});

pkg('the installed `super-pi --stdio` keeps its code cache in SUPERPI_HOME/cache, never in the package, and the next start compiles from it', async () => {
  const home = path.join(tmp, 'home');
  const start = () => spawnSync(bin(), ['--stdio', '--workspace', ws, '--log-level', 'debug'], {
    cwd: installed, input: '{"jsonrpc":"2.0","id":1,"method":"ping"}\n', encoding: 'utf8', timeout: 60_000, env: { ...getDefaultEnvironment(), SUPERPI_HOME: home },
  });
  const first = start();
  assert.is(first.stdout, '{"jsonrpc":"2.0","id":1,"result":{}}\n', first.stderr);
  assert.match(first.stderr, /compiled without the code cache/);
  assert.match(first.stderr, /code cache written/);
  const cached = await readdir(path.join(home, 'cache'));
  assert.is(cached.length, 1, cached.join(', '));
  assert.match(cached[0] as string, /^super-pi-[0-9a-f]{16}-v\d+\.\d+\.\d+-\w+\.v8cache$/);
  const second = start();
  assert.is(second.stdout, '{"jsonrpc":"2.0","id":1,"result":{}}\n', second.stderr);
  assert.match(second.stderr, /compiled from the code cache/);
  const inPackage = (await readdir(path.join(installed, 'node_modules', 'super-pi'), { recursive: true })).filter((f) => f.endsWith('.v8cache'));
  assert.equal(inPackage, []);
});

pkg('the installed `super-pi --port 0` serves the same over Streamable HTTP, and drains on SIGTERM', async () => {
  const child = spawn(bin(), ['--port', '0', '--workspace', ws, '--threads', '1', '--tool-threads', '1'], { cwd: installed, stdio: ['ignore', 'pipe', 'ignore'] });
  children.add(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Streamable HTTP\s+(http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`super-pi exited (${code}) before printing its URL: ${out}`)));
  });
  const client = new Client({ name: 'packed-install-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    await exercise(client, 'anonymous');
  } finally {
    await client.close();
  }
  child.kill('SIGTERM');
  assert.is(await exited, 0);
});

const LIBRARY_USE = `
import { handleMcpLine, initialState, negotiateVersion, supportedVersions, toolDefinitions, runStdio, startServer } from 'super-pi';
import { PassThrough } from 'node:stream';
const ping = handleMcpLine('{"jsonrpc":"2.0","id":1,"method":"ping"}', initialState({ workspace: process.argv[2] }));
const server = await startServer({ port: 0, workspace: process.argv[2], threads: 1, toolThreads: 1 });
const health = (await fetch(server.url.replace(/\\/mcp$/, '/health'))).status;
await server.close();
const input = new PassThrough();
const output = new PassThrough();
let lines = '';
output.on('data', (d) => (lines += d));
const served = runStdio({ input, output, workspace: process.argv[2], threads: 1, toolThreads: 1 });
input.end('{"jsonrpc":"2.0","id":7,"method":"ping"}\\n');
const end = await served;
console.log(JSON.stringify({
  end: end.kind, ping: ping.replies, negotiated: negotiateVersion('1999-01-01'), supportedVersions,
  tools: toolDefinitions.map((t) => t.name), url: server.url, health, stdio: lines,
}));
`;

pkg('the library API imports from the installed package: the pure core, the tools, startServer and runStdio', async () => {
  await writeFile(path.join(installed, 'use.mjs'), LIBRARY_USE);
  const out = execFileSync(process.execPath, ['use.mjs', ws], { cwd: installed, encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'ignore'] });
  const r = JSON.parse(out) as Record<string, unknown>;
  assert.equal(r.ping, [{ line: '{"jsonrpc":"2.0","id":1,"result":{}}', inReplyTo: 1 }]);
  assert.is(r.negotiated, '2025-11-25');
  assert.equal(r.supportedVersions, ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']);
  assert.is((r.tools as string[]).length, 8);
  assert.match(r.url as string, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  assert.is(r.health, 200);
  assert.is(r.stdio, '{"jsonrpc":"2.0","id":7,"result":{}}\n');
  assert.is(r.end, 'ended');
});

// Each `@ts-expect-error` fails the check if its line compiles: the declarations must be real types, not `any`.
const TYPED_USE = `
import { handleMcpLine, initialState, negotiateVersion, supportedVersions, toolDefinitions, runStdio, startServer, type Outgoing, type ProtocolVersion, type RunningServer, type StdioEnd, type Step } from 'super-pi';
export const version: ProtocolVersion = negotiateVersion('2025-03-26');
export const first: string = supportedVersions[0];
export const names: string[] = toolDefinitions.map((t) => t.name);
export const step: Step = handleMcpLine('{}', initialState({ workspace: '/tmp' }));
export const replies: Outgoing[] = step.replies;
export const answered: string | number | undefined = step.replies[0]?.inReplyTo;
export const session: Promise<StdioEnd> = runStdio({ workspace: '/tmp', harness: 'super-pi-code', logLevel: 'error' });
export const server: Promise<RunningServer> = startServer({ port: 0, requireAuth: true });
export const url = async (): Promise<string> => (await server).url;
export const gaveUp = async (): Promise<boolean> => (await session).kind === 'gave-up';
// @ts-expect-error a protocol version is a string
export const wrongVersion: number = supportedVersions[0];
// @ts-expect-error there is no such option
export const wrongOption = startServer({ prot: 0 });
// @ts-expect-error handleMcpLine needs a state
export const wrongCall = handleMcpLine('{}');
`;

pkg('the declarations type-check a typed use of the library (tsc --noEmit)', async () => {
  const dir = path.join(installed, 'typed');
  await mkdir(dir);
  await writeFile(path.join(dir, 'use.ts'), TYPED_USE);
  // skipLibCheck as `tsc --init` sets it: the declarations name @types/node and the SDK's types, which a
  // consumer without them need not install.
  await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', noEmit: true, skipLibCheck: true, types: [] },
    files: ['use.ts'],
  }));
  try {
    execFileSync(process.execPath, [tsc, '-p', dir], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    assert.unreachable(`tsc failed: ${(err as { stdout?: string }).stdout ?? err}`);
  }
});

pkg.run();
