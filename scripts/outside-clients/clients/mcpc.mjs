// mcpc (@apify/mcpc), the command-line MCP client: a session opened with `connect`, then one command per
// call with --json (which prints the MCP result as it came). Its state lives in a temporary MCPC_HOME_DIR.

import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const { driverEnv, exercise, packageVersion } = await import(process.env.SUPERPI_CHECKS ?? '');
const env = driverEnv();
const home = await mkdtemp(path.join(os.tmpdir(), 'mcpc-home-'));
// One session name per transport: a second connect under a name just closed did not start its bridge.
const session = `@superpi-${env.transport}`;
const bin = path.join(process.cwd(), 'node_modules', '.bin', 'mcpc');
const run = async (...args) => {
  const { stdout } = await promisify(execFile)(bin, args, { env: { ...process.env, MCPC_HOME_DIR: home }, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
};

let target = env.http;
if (env.transport === 'stdio') {
  const config = path.join(home, 'mcp.json');
  await writeFile(config, JSON.stringify({ mcpServers: { superpi: { command: env.stdio.command, args: env.stdio.args, cwd: env.stdio.cwd } } }));
  target = `${config}:superpi`;
}
const notes = [];
const connect = () => run('connect', target, session, ...(env.transport === 'http' ? ['--no-profile'] : []), '--json');
// mcpc gives its bridge process 5 s to open its socket, and the bridge first starts and initializes the
// server: on a loaded machine that can miss. Up to three tries, each failure said in the results.
for (let attempt = 1; ; attempt++) {
  try {
    await connect();
    break;
  } catch (err) {
    if (attempt === 3) throw err;
    notes.push(`connect ${attempt} failed (${String(err).match(/"error": "([^"]*)"/)?.[1] ?? 'see stderr'}); tried again`);
  }
}
await exercise({
  listTools: async () => {
    const listed = JSON.parse(await run(session, 'tools-list', '--json'));
    return Array.isArray(listed) ? listed : listed.tools;
  },
  call: async (name, args) => JSON.parse(await run(session, 'tools-call', name, JSON.stringify(args), '--json')),
  close: async () => {
    await run('close', session);
    await rm(home, { recursive: true, force: true });
  },
}, { client: 'mcpc (Apify)', version: await packageVersion('@apify/mcpc'), transport: env.transport, notes });
