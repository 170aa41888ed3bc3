#!/usr/bin/env node
// Drives super-pi with MCP clients nobody here wrote (issue 25), each installed from the npm registry into
// a temporary prefix of its own (never the project's node_modules), and prints what passed as a table for
// docs/clients.md. Heavy (installs, a server per client): not part of `npm test`.
// Usage: node scripts/outside-clients/run.mjs [--only sdk-v1,ai-sdk] [--keep] [--json FILE]

import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import sharp from 'sharp';
import { NOTES, PNG } from './checks.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
const bin = path.join(repoRoot, 'bin/super-pi.js');
/** One client's install and run may take this long (npm on a shared machine is slow). */
const INSTALL_TIMEOUT_MS = 300_000;
const RUN_TIMEOUT_MS = 120_000;

/**
 * The clients: `packages` are installed into a fresh prefix (none: the project has it installed),
 * `transports` are the ones its driver is run over.
 * @type {{ id: string, driver: string, packages: string[], transports: ('stdio' | 'http')[] }[]}
 */
// mcp-use is its 1.x line: 2.x moved the client to @mcp-use/client, which the registry here does not have
// (docs/clients.md). The Inspector is 2.x's `--cli` mode (the separate inspector-cli 1.x is deprecated).
const CLIENTS = [
  { id: 'sdk-v1', driver: 'sdk-v1.mjs', packages: [], transports: ['stdio', 'http'] },
  { id: 'sdk-v2', driver: 'sdk-v2.mjs', packages: [], transports: ['stdio', 'http'] },
  { id: 'ai-sdk', driver: 'ai-sdk.mjs', packages: ['@ai-sdk/mcp'], transports: ['stdio', 'http'] },
  { id: 'langchain', driver: 'langchain.mjs', packages: ['@langchain/mcp-adapters', '@langchain/core'], transports: ['stdio', 'http'] },
  { id: 'mastra', driver: 'mastra.mjs', packages: ['@mastra/mcp@2', '@mastra/core@1'], transports: ['stdio', 'http'] },
  { id: 'openai-agents', driver: 'openai-agents.mjs', packages: ['@openai/agents-core', 'zod'], transports: ['stdio', 'http'] },
  { id: 'mcp-remote', driver: 'mcp-remote.mjs', packages: ['mcp-remote', '@modelcontextprotocol/sdk'], transports: ['http'] },
  { id: 'mcpc', driver: 'mcpc.mjs', packages: ['@apify/mcpc'], transports: ['stdio', 'http'] },
  { id: 'mcp-use', driver: 'mcp-use.mjs', packages: ['mcp-use@1', 'langchain@1', '@langchain/core@1', 'zod@4'], transports: ['stdio', 'http'] },
  { id: 'inspector', driver: 'inspector.mjs', packages: ['@modelcontextprotocol/inspector@2'], transports: ['stdio', 'http'] },
];

/** Runs a command to its end; resolves with its exit code and output, rejects past `timeoutMs`. */
function run(command, args, options, timeoutMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d.toString()));
    child.stderr.on('data', (d) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')}: no end after ${timeoutMs / 1000} s; stderr: ${stderr.slice(-500)}`));
    }, timeoutMs);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal, stdout, stderr });
    });
  });
}

async function makeWorkspace(base) {
  const ws = path.join(base, 'ws');
  await mkdir(path.join(ws, 'docs'), { recursive: true });
  await writeFile(path.join(ws, 'notes.txt'), NOTES);
  for (const name of ['a', 'b', 'c', 'd', 'e']) await writeFile(path.join(ws, 'docs', `${name}.txt`), `${name}\n`);
  const raw = Buffer.alloc(PNG.width * PNG.height * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 7) % 251;
  await writeFile(path.join(ws, 'shot.png'), await sharp(raw, { raw: { width: PNG.width, height: PNG.height, channels: 3 } }).png().toBuffer());
  return ws;
}

/** super-pi over HTTP on a free port of 127.0.0.1, as a user starts it (the `super-pi` command). */
async function startHttp(ws) {
  const child = spawn(process.execPath, [bin, '--port', '0', '--workspace', ws], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d.toString()));
  const url = await new Promise((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (d) => {
      stdout += d.toString();
      const m = /Streamable HTTP\s+(http:\/\/\S+)/.exec(stdout);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
  });
  return {
    url,
    stop: () => new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}

/** The server's tool list as the SDK Client sees it: the outputSchemas a client that hides them is checked against. */
async function referenceTools(url, file) {
  const client = new Client({ name: 'outside-clients-reference', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const { tools } = await client.listTools();
  await client.close();
  await writeFile(file, JSON.stringify(tools));
}

async function main() {
  const args = process.argv.slice(2);
  const onlyAt = args.indexOf('--only');
  const only = onlyAt >= 0 ? new Set(args[onlyAt + 1]?.split(',')) : null;
  const jsonAt = args.indexOf('--json');
  const keep = args.includes('--keep');
  const chosen = CLIENTS.filter((c) => !only || only.has(c.id));
  if (only && chosen.length !== only.size) throw new Error(`unknown client in --only; known: ${CLIENTS.map((c) => c.id).join(', ')}`);

  const build = await run(process.execPath, [path.join(repoRoot, 'scripts/build.mjs')], { cwd: repoRoot }, 120_000);
  if (build.code !== 0) throw new Error(`build failed: ${build.stderr}`);
  const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-outside-')));
  const ws = await makeWorkspace(base);
  const server = await startHttp(ws);
  const schemas = path.join(base, 'tools.json');
  const results = [];
  try {
    await referenceTools(server.url, schemas);
    for (const c of chosen) {
      // A prefix per client: their dependencies (zod 3 or 4, SDK versions) must not meet.
      let dir = here;
      if (c.packages.length > 0) {
        dir = await mkdtemp(path.join(base, `${c.id}-`));
        process.stderr.write(`${c.id}: npm i --prefix ${dir} ${c.packages.join(' ')}\n`);
        const installed = await run('npm', ['i', '--prefix', dir, '--no-audit', '--no-fund', '--loglevel=error', ...c.packages], { cwd: dir }, INSTALL_TIMEOUT_MS)
          .catch((err) => ({ code: -1, stdout: '', stderr: String(err) }));
        if (installed.code !== 0) {
          results.push({ id: c.id, client: c.id, version: '-', transport: '-', rows: [{ check: 'install', ok: false, detail: installed.stderr.trim().split('\n').slice(-3).join(' ') }] });
          continue;
        }
        await copyFile(path.join(here, 'clients', c.driver), path.join(dir, c.driver));
      }
      const driver = c.packages.length > 0 ? path.join(dir, c.driver) : path.join(here, 'clients', c.driver);
      for (const transport of c.transports) {
        process.stderr.write(`${c.id}: ${transport}\n`);
        const env = {
          ...process.env,
          SUPERPI_CHECKS: pathToFileURL(path.join(here, 'checks.mjs')).href,
          SUPERPI_SCHEMAS: schemas,
          SUPERPI_TRANSPORT: transport,
          SUPERPI_STDIO: JSON.stringify({ command: process.execPath, args: [bin, '--stdio', '--workspace', ws], cwd: repoRoot }),
          SUPERPI_HTTP: server.url,
          SUPERPI_DRIVER_DIR: c.packages.length > 0 ? dir : repoRoot,
        };
        const out = await run(process.execPath, [driver], { cwd: path.dirname(driver), env }, RUN_TIMEOUT_MS).catch((err) => ({ code: -1, stdout: '', stderr: String(err) }));
        // A driver may print several result lines (the Inspector CLI: one per protocol era).
        const lines = out.stdout.split('\n').filter((l) => l.startsWith('SUPERPI-RESULT '));
        for (const line of lines) results.push({ id: c.id, ...JSON.parse(line.slice('SUPERPI-RESULT '.length)) });
        if (lines.length === 0) results.push({ id: c.id, client: c.id, version: '-', transport, rows: [{ check: 'run', ok: false, detail: `exit ${out.code}: ${(out.stderr || out.stdout).trim().split('\n').slice(-12).join(' ')}` }] });
      }
    }
  } finally {
    await server.stop();
    if (!keep) await rm(base, { recursive: true, force: true });
    else process.stderr.write(`kept ${base}\n`);
  }
  if (jsonAt >= 0) await writeFile(path.resolve(args[jsonAt + 1] ?? 'outside-clients.json'), JSON.stringify(results, null, 2));
  process.stdout.write(table(results));
  return results.every((r) => r.rows.every((row) => row.ok !== false)) ? 0 : 1;
}

/** One row per client and transport: what passed, what failed (with why), what the client does not expose. */
function table(results) {
  const lines = ['| client | version | transport | passed | failed (why) | not exposed |', '|---|---|---|---|---|---|'];
  for (const r of results) {
    const passed = r.rows.filter((x) => x.ok === true).map((x) => x.check).join(', ');
    const failed = [...r.rows.filter((x) => x.ok === false).map((x) => `${x.check}: ${x.detail}`), ...(r.notes ?? []).map((n) => `note: ${n}`)].join('; ');
    const hidden = r.rows.filter((x) => x.ok === null).map((x) => x.check).join(', ');
    lines.push(`| ${r.client} | ${r.version} | ${r.transport} | ${passed} | ${failed.replace(/\|/g, '\\|')} | ${hidden} |`);
  }
  return `${lines.join('\n')}\n`;
}

process.exitCode = await main();
