// Shared set-up for end-to-end tests: a temporary workspace with a little project in it, and the
// official SDK client connected to `examples/stdio.ts` over stdio.

import { type ChildProcess, execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type PostgresAvailability, type PostgresServer, startPostgres } from '../store/postgres-server.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { stdioServerEnv } from '../test-home.ts';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const stdioEntry = path.join(repoRoot, 'examples/stdio.ts');

export interface Sandbox {
  /** Parent temp dir; holds `ws` (the workspace) and `ws-evil` (a prefix sibling) and `outside`. */
  base: string;
  ws: string;
  cleanup(): Promise<void>;
}

export async function makeSandbox(): Promise<Sandbox> {
  const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-e2e-')));
  const ws = path.join(base, 'ws');
  await mkdir(path.join(ws, 'src'), { recursive: true });
  await mkdir(path.join(base, 'ws-evil'), { recursive: true });
  await mkdir(path.join(base, 'outside'), { recursive: true });
  await writeFile(path.join(base, 'ws-evil', 'secret.txt'), 'sibling secret\n');
  await writeFile(path.join(base, 'outside', 'secret.txt'), 'outside secret\n');
  await writeFile(path.join(ws, 'README.md'), '# Demo project\n\nA tiny project for tests.\n');
  await writeFile(path.join(ws, 'src', 'greet.ts'), 'export function greet(name: string) {\n  return `hello ${name}`;\n}\n');
  await writeFile(path.join(ws, 'src', 'math.ts'), 'export const add = (a: number, b: number) => a + b;\n');
  await writeFile(path.join(ws, '.gitignore'), 'build/\n*.log\n');
  await mkdir(path.join(ws, 'build'), { recursive: true });
  await writeFile(path.join(ws, 'build', 'greet.js'), 'function greet() {}\n');
  await writeFile(path.join(ws, 'debug.log'), 'greet greet greet\n');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ws, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'add', '-A');
  git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'init');
  return { base, ws, cleanup: () => rm(base, { recursive: true, force: true }) };
}

export interface Connected {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
  close(): Promise<void>;
}

/**
 * A stdio server on `ws`, run by `node` (this test's Node unless a test needs the server's Node elsewhere),
 * in the run's SUPERPI_HOME unless `env` names another (the SDK passes its child only the variables it is given).
 */
export async function connectStdio(ws: string, extraArgs: string[] = [], capabilities: Record<string, unknown> = {}, prepare: (c: Client) => Client = (c) => c, env?: Record<string, string>, node: string = process.execPath): Promise<Connected> {
  const transport = new StdioClientTransport({
    env: stdioServerEnv(env),
    command: node,
    args: ['--import', 'tsx', stdioEntry, '--workspace', ws, ...extraArgs],
    cwd: repoRoot,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = prepare(new Client({ name: 'super-pi-e2e', version: '1.0.0' }, { capabilities }));
  await client.connect(transport);
  return {
    client,
    transport,
    stderr: () => stderr,
    async close() {
      await client.close();
    },
  };
}

/** The text of a tool result's first content item. */
export function textOf(result: unknown): string {
  const content = (result as { content: { type: string; text?: string }[] }).content;
  const first = content[0];
  if (!first || first.type !== 'text' || typeof first.text !== 'string') throw new Error(`no text content in ${JSON.stringify(result)}`);
  return first.text;
}

export interface RunningServer {
  url: string;
  wsUrl: string;
  child: ChildProcess;
  stderr: () => string;
  stop(): Promise<number | null>;
}

/** The `SUPERPI_STATE_KEY` of every server a test starts: 32 bytes or more, as a node requires. */
export const TEST_STATE_KEY = 'test-state-key-0123456789abcdef-0123456789abcdef';

/**
 * Starts a server on 127.0.0.1 and a free port; resolves once it printed its URL. `entry`: the source
 * through tsx (`examples/server.ts`), or the `super-pi` command users run (`bin/super-pi.js`: the dist/
 * bundle compiled from its code cache, which `npm test` builds first) — code that works from source can
 * fail there (a dynamic import() of a module outside the bundle does). `root`: the checkout whose server
 * runs (the benchmarks start an older one beside this one).
 */
export async function startHttpServerProcess(ws: string, extraArgs: string[] = [], env: NodeJS.ProcessEnv = {}, entry: 'source' | 'bundle' = 'source', root = repoRoot): Promise<RunningServer> {
  const { spawn } = await import('node:child_process');
  const start = entry === 'source' ? ['--import', 'tsx', path.join(root, 'examples/server.ts')] : [path.join(root, 'bin/super-pi.js')];
  const child = spawn(process.execPath, [...start, '--port', '0', '--workspace', ws, ...extraArgs], {
    cwd: root,
    // Every test node shares one state key, as a cluster's nodes must (a PostgreSQL store refuses to start without one).
    env: { SUPERPI_STATE_KEY: TEST_STATE_KEY, ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start; stderr: ${stderr}`)), 20_000);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = /Streamable HTTP\s+(http:\/\/\S+)/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}; stderr: ${stderr}`)));
  });
  return {
    url,
    wsUrl: url.replace(/^http/, 'ws'),
    child,
    stderr: () => stderr,
    stop: () => new Promise((resolve) => {
      if (child.exitCode !== null) return resolve(child.exitCode);
      child.once('exit', (code) => resolve(code));
      child.kill('SIGTERM');
    }),
  };
}

/** What a file's cluster tests share: one PostgreSQL server and one sandbox workspace. */
export interface ClusterGround {
  readonly pg: PostgresServer;
  readonly box: Sandbox;
}

/**
 * Starts a PostgreSQL server and a sandbox before the file's first test and stops both after its last;
 * the returned function gives them to a test (and fails it if they did not start).
 */
export function clusterGround(t: { before(fn: () => Promise<void>): void; after(fn: () => Promise<void>): void }, found: PostgresAvailability & { ok: true }): () => ClusterGround {
  let pg: PostgresServer | null = null;
  let box: Sandbox | null = null;
  t.before(async () => {
    pg = await startPostgres(found);
    box = await makeSandbox();
  });
  t.after(async () => {
    await box?.cleanup();
    await pg?.stop();
  });
  return () => {
    if (pg === null || box === null) throw new Error('the PostgreSQL server or the sandbox did not start');
    return { pg, box };
  };
}
